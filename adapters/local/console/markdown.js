// markdown.js: a small Markdown renderer for model and hook output.
//
// It builds DOM nodes only: every piece of text is set with
// createTextNode/textContent, never parsed as HTML, so markup in a reply
// (<img onerror=…>, <script>) shows as the text it is. Links are kept only
// for http, https and mailto URLs; any other link shows as plain text.
// Supported: fenced code blocks, inline code, headings, bullet and
// numbered lists, block quotes, bold, italic, links and bare URLs.

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

// safeURL returns url when it is an absolute http, https or mailto URL,
// else null.
export function safeURL(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(u.protocol) ? u.href : null;
}

// MAX_QUOTE_DEPTH bounds nested block quotes (each level is a recursive
// call): deeper ">" stay text.
const MAX_QUOTE_DEPTH = 8;

// render turns Markdown text into a DocumentFragment.
export function render(text, depth = 0) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++; // the closing fence (or the end)
      const pre = el('pre');
      const code = el('code');
      const lang = fence[2].trim().split(/\s+/)[0];
      if (lang) code.dataset.lang = lang;
      code.textContent = body.join('\n');
      pre.appendChild(code);
      frag.appendChild(pre);
      continue;
    }
    if (/^\s*$/.test(line)) {
      i++;
      continue;
    }
    const heading = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      const h = el('h' + Math.min(heading[1].length + 2, 6));
      h.appendChild(inline(heading[2]));
      frag.appendChild(h);
      i++;
      continue;
    }
    if (depth < MAX_QUOTE_DEPTH && /^\s{0,3}>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s{0,3}>\s?/, ''));
      const q = el('blockquote');
      q.appendChild(render(quoted.join('\n'), depth + 1));
      frag.appendChild(q);
      continue;
    }
    const item = listItem(line);
    if (item) {
      const list = el(item.ordered ? 'ol' : 'ul');
      if (item.ordered && item.start !== 1) list.start = item.start;
      while (i < lines.length) {
        const it = listItem(lines[i]);
        if (it && it.ordered === item.ordered) {
          const li = el('li');
          li.appendChild(inline(it.text));
          list.appendChild(li);
          i++;
        } else if (!it && /^\s{2,}\S/.test(lines[i]) && list.lastChild) {
          // a continuation line of the item above
          list.lastChild.appendChild(document.createTextNode(' '));
          list.lastChild.appendChild(inline(lines[i].trim()));
          i++;
        } else {
          break;
        }
      }
      frag.appendChild(list);
      continue;
    }
    // the first line is always taken, so that every pass moves on
    const para = [lines[i++]];
    while (i < lines.length && !/^\s*$/.test(lines[i]) && !startsBlock(lines[i], depth)) para.push(lines[i++]);
    const p = el('p');
    para.forEach((l, n) => {
      if (n > 0) p.appendChild(el('br'));
      p.appendChild(inline(l));
    });
    frag.appendChild(p);
  }
  return frag;
}

// FENCE opens a code block: ``` or ~~~ and an info string whose first
// word names the language.
const FENCE = /^\s{0,3}(`{3,}|~{3,})([^`]*)$/;

function startsBlock(line, depth) {
  return FENCE.test(line) || /^\s{0,3}#{1,6}\s/.test(line) || (depth < MAX_QUOTE_DEPTH && /^\s{0,3}>/.test(line)) || listItem(line) !== null;
}

function listItem(line) {
  let m = line.match(/^\s{0,3}[-*+]\s+(.*)$/);
  if (m) return { ordered: false, text: m[1] };
  m = line.match(/^\s{0,3}(\d{1,9})[.)]\s+(.*)$/);
  if (m) return { ordered: true, start: Number(m[1]), text: m[2] };
  return null;
}

// The inline forms, tried left to right: code span, bold, italic, link,
// bare URL. A span is looked for at most 1000 characters ahead, so a long
// line full of unclosed markers costs linear time, not quadratic.
const INLINE = new RegExp([
  '(`+)([^`]|[^`][\\s\\S]{0,1000}?[^`])\\1(?!`)', // 1, 2: code
  '\\*\\*(?=\\S)([\\s\\S]{0,1000}?\\S)\\*\\*', // 3: bold
  '__(?=\\S)([\\s\\S]{0,1000}?\\S)__', // 4: bold
  '\\*(?=[^\\s*])([^*]{0,1000}?[^\\s*])\\*', // 5: italic
  '(?<![\\w])_(?=[^\\s_])([^_]{0,1000}?[^\\s_])_(?![\\w])', // 6: italic
  '\\[([^\\[\\]]+)\\]\\(\\s*<?([^\\s()<>]*(?:\\([^\\s()<>]*\\))?[^\\s()<>]*)>?\\s*\\)', // 7, 8: link
  '((?:https?:\\/\\/|mailto:)[^\\s<>]*[^\\s<>.,;:!?\'")\\]])', // 9: bare URL
].join('|'), 'g');

// inline renders one line's inline Markdown.
export function inline(text) {
  const frag = document.createDocumentFragment();
  // a regexp of its own: the calls for bold and italic recurse
  const re = new RegExp(INLINE.source, 'g');
  let last = 0;
  for (let m; (m = re.exec(text)) !== null;) {
    if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
    last = re.lastIndex;
    if (m[1] !== undefined) {
      const code = el('code');
      code.textContent = m[2].replace(/^ (.*) $/, '$1');
      frag.appendChild(code);
    } else if (m[3] !== undefined || m[4] !== undefined) {
      const b = el('strong');
      b.appendChild(inline(m[3] ?? m[4]));
      frag.appendChild(b);
    } else if (m[5] !== undefined || m[6] !== undefined) {
      const it = el('em');
      it.appendChild(inline(m[5] ?? m[6]));
      frag.appendChild(it);
    } else if (m[7] !== undefined) {
      const href = safeURL(m[8]);
      if (href) {
        const a = link(href);
        a.appendChild(inline(m[7]));
        frag.appendChild(a);
      } else {
        frag.appendChild(document.createTextNode(m[0]));
      }
    } else {
      const href = safeURL(m[9]);
      if (href) {
        const a = link(href);
        a.textContent = m[9];
        frag.appendChild(a);
      } else {
        frag.appendChild(document.createTextNode(m[0]));
      }
    }
  }
  if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
  return frag;
}

function link(href) {
  const a = el('a');
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer nofollow';
  return a;
}

function el(name) {
  return document.createElement(name);
}
