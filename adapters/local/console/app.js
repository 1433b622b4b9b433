// app.js: the herald console. Plain JavaScript, no build step.
//
// Views: Chat (this browser's local chat), Live trace (every hook point
// from /v1/events), Sessions and Hooks (shown only when the gateway
// serves their endpoints). The token is kept in localStorage and sent as
// a bearer header; the event stream authenticates with a one-connection
// ticket (EventSource) or, where the gateway has no tickets, with the
// header through a fetch-based reader — the token never goes in a URL.
// Text from the model or hooks is only ever set with textContent or
// through markdown.js, which builds DOM nodes.

import { render } from './markdown.js';

const TOKEN_KEY = 'heraldToken';
const CHAT_KEY = 'heraldChat';
const chat = localStorage.getItem(CHAT_KEY) || 'web';
const me = { id: 'web-user', name: 'You' };
const MAX_TRACE = 1000;

const $ = (id) => document.getElementById(id);

function el(name, props = {}, ...children) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

// ---- the API -------------------------------------------------------------

class Unauthorized extends Error {}

function token() {
  return localStorage.getItem(TOKEN_KEY) || '';
}

// api calls the local API with the bearer token; it returns the Response
// (any status but 401, which asks for the token again).
async function api(method, path, body, signal) {
  const headers = { Authorization: 'Bearer ' + token() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  if (r.status === 401) {
    askToken('The gateway refused the token; paste it again.');
    throw new Unauthorized('unauthorized');
  }
  return r;
}

async function errorText(r) {
  try {
    const j = await r.json();
    return j.error || r.status + ' ' + r.statusText;
  } catch {
    return r.status + ' ' + r.statusText;
  }
}

// ---- sign in ---------------------------------------------------------------

let started = false;

function askToken(message) {
  $('auth').hidden = false;
  document.querySelector('main').hidden = true;
  $('auth-error').textContent = message || '';
  $('token').value = token();
  $('token').focus();
}

$('auth-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('token').value.trim();
  if (!t) return;
  localStorage.setItem(TOKEN_KEY, t);
  // loops stopped by a refused token start again with the page
  if (started) {
    location.reload();
    return;
  }
  $('auth').hidden = true;
  document.querySelector('main').hidden = false;
  start();
});
$('change-token').addEventListener('click', () => askToken(''));

// ---- views ---------------------------------------------------------------

function showView(name) {
  for (const b of document.querySelectorAll('.tab')) b.setAttribute('aria-pressed', String(b.dataset.view === name));
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-' + name;
  if (name === 'sessions') loadSessions();
  if (name === 'hooks') loadHooks();
  if (name === 'chat') $('input').focus();
}
for (const b of document.querySelectorAll('.tab')) b.addEventListener('click', () => showView(b.dataset.view));

// optional views are shown once their endpoint answers; a 404 (a gateway
// without it) leaves the tab hidden, once, with no retry
async function probeViews() {
  for (const [view, path] of [['sessions', '/v1/sessions?limit=1'], ['hooks', '/v1/hooks']]) {
    try {
      const r = await api('GET', path);
      document.querySelector(`.tab[data-view="${view}"]`).hidden = !r.ok;
    } catch { /* unauthorized or offline: the tab stays hidden */ }
  }
}

// ---- chat ------------------------------------------------------------------

const messages = $('messages');
const seen = new Map(); // outbox message id → its element
let outboxAfter = 0;

function atBottom() {
  return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
}

function append(node) {
  const stick = atBottom();
  messages.appendChild(node);
  if (stick) messages.scrollTop = messages.scrollHeight;
  return node;
}

function userMessage(text, files = []) {
  const body = el('div', { class: 'body' });
  body.append(render(text));
  for (const f of files) body.append(el('div', { class: 'attachment', text: 'attached: ' + f }));
  return append(el('div', { class: 'msg me' }, el('div', { class: 'who', text: 'you' }), body));
}

function note(text, cls = 'note') {
  return append(el('div', { class: 'msg ' + cls, role: cls === 'error' ? 'alert' : undefined, text }));
}

// botMessage shows a message the gateway sent to this chat, once per id;
// a later call with the same id updates it (an edit, a streamed reply
// growing). The outbox (fromOutbox) only adds messages: a poll read
// before the last edit may answer after its message_update, and must not
// put the older text back.
function botMessage(m, fromOutbox = false) {
  const id = m.id ? String(m.id) : '';
  let node = id ? seen.get(id) : null;
  if (node && fromOutbox) return node;
  if (!node) {
    node = el('div', { class: 'msg bot', 'data-id': id }, el('div', { class: 'who', text: 'herald' }), el('div', { class: 'body' }), el('div', { class: 'buttons' }));
    if (id) seen.set(id, node);
    append(node);
  }
  const body = node.querySelector('.body');
  body.replaceChildren(render(m.text || ''));
  if (m.file) body.append(fileLink(m.file));
  drawButtons(node, id, m.buttons || []);
  if ((m.buttons || []).length) {
    node.classList.add('prompt');
    ownerLine(node);
  }
  if (id && /^\d+$/.test(id)) outboxAfter = Math.max(outboxAfter, Number(id));
  return node;
}

// approvalSession is whose session the chat's last approval prompt is
// for ("session" beside pre_approval_request's payload).
let approvalSession = null;

// sessionLabel names a session as platform · chat · user.
function sessionLabel(s) {
  return [s.platform, s.chat_id, s.user_id].filter(Boolean).join(' · ');
}

// ownerLine says on an approval prompt whose session it is for, once
// the console knows it.
function ownerLine(node) {
  if (!approvalSession || node.querySelector('.owner')) return;
  node.querySelector('.who').after(el('div', { class: 'owner', title: approvalSession.key, text: 'approval for ' + sessionLabel(approvalSession) }));
}

function drawButtons(node, id, buttons) {
  const row = node.querySelector('.buttons');
  row.replaceChildren();
  for (const b of buttons) {
    const btn = el('button', { type: 'button', class: 'choice ' + (b.style || ''), text: b.label });
    btn.addEventListener('click', () => press(node, id, b, row));
    row.append(btn);
  }
}

async function press(node, id, button, row) {
  for (const b of row.querySelectorAll('button')) b.disabled = true;
  try {
    const r = await api('POST', `/v1/chats/${encodeURIComponent(chat)}/press`, { message_id: id, data: button.data, user_id: me.id, user_name: me.name });
    if (!r.ok) {
      note(r.status === 404 ? 'This gateway takes no button presses; answer by typing (/approve or /deny).' : 'press failed: ' + (await errorText(r)), 'error');
      for (const b of row.querySelectorAll('button')) b.disabled = false;
      return;
    }
    const j = await r.json();
    if (j.reply) node.append(el('div', { class: 'press-reply', role: 'status', text: j.reply }));
  } catch (err) {
    if (!(err instanceof Unauthorized)) note('press failed: ' + err, 'error');
    for (const b of row.querySelectorAll('button')) b.disabled = false;
  }
}

// a file the agent sent: downloaded with the token, saved under its name
function fileLink(f) {
  const a = el('a', { href: '#', class: 'file', text: `file: ${f.name} (${f.size} bytes)` });
  a.addEventListener('click', async (e) => {
    e.preventDefault();
    // the token goes only to this gateway's files
    if (!String(f.url).startsWith('/v1/files/')) return;
    try {
      const r = await api('GET', f.url);
      if (!r.ok) {
        note('download failed: ' + (await errorText(r)), 'error');
        return;
      }
      const link = el('a', { href: URL.createObjectURL(await r.blob()), download: f.name });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    } catch (err) {
      if (!(err instanceof Unauthorized)) note('download failed: ' + err, 'error');
    }
  });
  return a;
}

// ---- tool cards --------------------------------------------------------------

const cards = new Map(); // tool_call_id → card

function toolCard(id, name, args) {
  let card = id ? cards.get(id) : null;
  if (card) return card;
  card = el('details', { class: 'tool running' });
  card.append(
    el('summary', {}, el('span', { class: 'tool-name', text: name || 'tool' }), el('span', { class: 'tool-state', text: 'running…' })),
    el('div', { class: 'tool-label', text: 'Arguments' }),
    el('pre', { class: 'tool-args', text: pretty(args) }),
    el('div', { class: 'tool-label', text: 'Result' }),
    el('pre', { class: 'tool-result', text: '…' }),
  );
  if (id) cards.set(id, card);
  append(card);
  return card;
}

function toolDone(card, result, ms) {
  card.classList.remove('running');
  card.classList.add('done');
  card.querySelector('.tool-result').textContent = pretty(result);
  card.querySelector('.tool-state').textContent = ms != null ? '✓ ' + duration(ms) : '✓';
}

function pretty(v) {
  if (v == null || v === '') return '';
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

function duration(ms) {
  return ms < 1000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(1) + ' s';
}

// ---- the turn's state ------------------------------------------------------

const turn = { session: '', since: 0, tool: '', timer: 0 };
// WAITING stands in for the tool while an approval is asked
const WAITING = 'waiting for approval';

function working(on, tool) {
  const w = $('working');
  if (!on) {
    clearInterval(turn.timer);
    turn.timer = 0;
    turn.since = 0;
    turn.tool = '';
    w.hidden = true;
    return;
  }
  if (!turn.since) turn.since = Date.now();
  if (tool !== undefined) turn.tool = tool;
  const draw = () => {
    const s = Math.floor((Date.now() - turn.since) / 1000);
    const doing = turn.tool === WAITING ? WAITING : 'running ' + turn.tool;
    w.textContent = `working… ${s}s` + (turn.tool ? ` · ${doing}` : '');
  };
  draw();
  w.hidden = false;
  if (!turn.timer) turn.timer = setInterval(draw, 1000);
}

// onEvent reads one /v1/events frame for the chat and the trace.
// A hook point's firing id and time ("point_id", "at") are in data,
// beside its context.
function onEvent(name, data, id) {
  const c = (data && data.context) || {};
  trace(name, c, data || {});
  const mine = c.chat_id === chat && (!c.platform || c.platform === 'local');
  switch (name) {
    case 'message':
    case 'message_update':
      if (c.chat_id === chat) botMessage(c);
      break;
    case 'agent:start':
      if (mine) {
        turn.session = c.session_id || turn.session;
        working(true, '');
      }
      break;
    case 'agent:end':
      if (mine) working(false);
      break;
    case 'pre_tool_call':
      if (c.session_id && c.session_id === turn.session) {
        toolCard(c.tool_call_id, c.tool_name, c.args);
        working(true, c.tool_name);
      }
      break;
    case 'post_tool_call':
      if (c.session_id && c.session_id === turn.session) {
        toolDone(toolCard(c.tool_call_id, c.tool_name, c.args), c.result, c.duration_ms);
        if (turn.since) working(true, '');
      }
      break;
    case 'pre_approval_request':
      // its payload names the session by key only: "session" says whose
      if (data && data.session && data.session.platform === 'local' && data.session.chat_id === chat) {
        approvalSession = data.session;
        working(true, WAITING);
        for (const node of messages.querySelectorAll('.msg.bot.prompt')) ownerLine(node);
      }
      break;
  }
}

// ---- sending -----------------------------------------------------------------

async function b64(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

async function send(text, files = []) {
  const media = [];
  for (const f of files) media.push({ name: f.name, mime: f.type, data: await b64(f) });
  try {
    const r = await api('POST', '/v1/messages?wait=60', { chat_id: chat, user_id: me.id, user_name: me.name, chat_type: 'dm', text, media });
    if (!r.ok && r.status !== 202) {
      note('not sent: ' + (await errorText(r)), 'error');
      return;
    }
    const j = await r.json();
    // replies come by the outbox and the event stream too; ids dedupe them
    for (const rep of j.replies || []) botMessage(rep);
    // a turn that ended while the stream was away is not left working
    if (j.status === 'done') working(false);
  } catch (err) {
    if (!(err instanceof Unauthorized)) note('not sent: ' + err, 'error');
  }
}

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = $('input');
  const picker = $('file');
  const text = input.value;
  const files = Array.from(picker.files);
  if (!text.trim() && !files.length) return;
  input.value = '';
  picker.value = '';
  userMessage(text, files.map((f) => f.name));
  send(text, files);
});

$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});

function stop() {
  userMessage('/stop');
  send('/stop');
}
$('stop').addEventListener('click', stop);
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !$('view-chat').hidden && $('auth').hidden && !$('working').hidden) {
    e.preventDefault();
    stop();
  }
});

// ---- history and the outbox ------------------------------------------------

// loadHistory shows the chat's current session from the server (when the
// gateway has the sessions API), then the outbox's messages that the
// transcript does not hold.
async function loadHistory() {
  let transcript = false;
  const r = await api('GET', `/v1/sessions?platform=local&chat_id=${encodeURIComponent(chat)}&limit=1`);
  if (r.ok) {
    const list = (await r.json()).sessions || [];
    if (list.length) {
      const d = await api('GET', `/v1/sessions/${encodeURIComponent(list[0].id)}`);
      if (d.ok) {
        const j = await d.json();
        for (const m of j.messages || []) historyMessage(m);
        turn.session = list[0].id;
        transcript = true;
      }
    }
  }
  const o = await api('GET', `/v1/chats/${encodeURIComponent(chat)}/messages?after=0`);
  if (!o.ok) return o.status !== 404;
  const msgs = (await o.json()).messages || [];
  // without the sessions API only herald's side of the chat is known
  if (!transcript && msgs.length) note('Earlier replies in this chat:');
  for (const m of msgs) {
    if (transcript) outboxAfter = Math.max(outboxAfter, Number(m.id));
    else botMessage(m, true);
  }
  return true;
}

// historyMessage draws one transcript message in the chat.
function historyMessage(m) {
  switch (m.role) {
    case 'user':
      userMessage(m.content || '');
      break;
    case 'assistant':
      for (const tc of m.tool_calls || []) toolCard(tc.id, tc.name, tc.arguments);
      if (m.content) botMessage({ text: m.content });
      break;
    case 'tool':
      toolDone(toolCard(m.tool_call_id, m.tool_name, ''), m.content, null);
      break;
  }
}

// followOutbox long-polls the chat's outbox, so a reply that comes after
// its request gave up still shows.
async function followOutbox() {
  let backoff = 1000;
  for (;;) {
    try {
      const r = await api('GET', `/v1/chats/${encodeURIComponent(chat)}/messages?after=${outboxAfter}&wait=30`);
      if (r.status === 404) return; // no outbox on this gateway
      if (!r.ok) throw new Error(await errorText(r));
      for (const m of (await r.json()).messages || []) botMessage(m, true);
      backoff = 1000;
    } catch (err) {
      if (err instanceof Unauthorized) return;
      await pause(backoff);
      backoff = Math.min(backoff * 2, 30000);
    }
  }
}

function pause(ms) {
  return new Promise((res) => setTimeout(res, ms));
}

// ---- the event stream -------------------------------------------------------

function connState(text, cls) {
  const c = $('conn');
  c.textContent = text;
  c.className = 'conn ' + (cls || '');
  document.body.dataset.live = String(cls === 'ok');
}

// events follows /v1/events: with a ticket through EventSource, or, when
// the gateway has no tickets (404), with the bearer header through fetch.
async function events() {
  let backoff = 1000;
  let lastID = '';
  for (;;) {
    streamOpened = false;
    try {
      const t = await api('POST', '/v1/events/ticket');
      if (t.status === 404) {
        lastID = await fetchEvents(lastID);
      } else if (t.ok) {
        const j = await t.json();
        await ticketEvents(j.ticket, j.events || []);
      } else {
        throw new Error(await errorText(t));
      }
    } catch (err) {
      if (err instanceof Unauthorized) {
        connState('signed out', 'bad');
        return;
      }
      if (err instanceof NoStream) {
        connState('no event stream', 'bad');
        return;
      }
      connState('reconnecting…', 'bad');
    }
    // a stream that opened and later ended reconnects at once; failures
    // back off up to 30 s
    backoff = streamOpened ? 1000 : Math.min(backoff * 2, 30000);
    await pause(streamOpened ? 250 : backoff);
  }
}

// NoStream: the gateway serves no event stream (404); the chat works
// without it.
class NoStream extends Error {}
let streamOpened = false;

const EVENT_NAMES = new Set();

// ticketEvents reads one EventSource connection until it fails; more
// are the names the ticket came with beyond the catalogue's.
function ticketEvents(ticket, more) {
  return new Promise((resolve) => {
    const es = new EventSource('/v1/events?ticket=' + encodeURIComponent(ticket));
    const listen = (name) => es.addEventListener(name, (e) => dispatch(name, e.data, e.lastEventId));
    // EventSource delivers a named event only to listeners of that name:
    // listen to the catalogue's (KNOWN_EVENTS) and to those the ticket
    // names (the commands plugins registered)
    // ("message" is among them: onmessage is the same event, and would
    // dispatch each one twice)
    for (const n of new Set([...KNOWN_EVENTS, ...more])) listen(n);
    es.onopen = () => {
      streamOpened = true;
      connState('live', 'ok');
    };
    es.onerror = () => {
      es.close();
      resolve();
    };
  });
}

// fetchEvents reads the stream with the bearer header until it ends; it
// returns the last event id, sent back as Last-Event-ID on reconnect.
async function fetchEvents(lastID) {
  const headers = { Authorization: 'Bearer ' + token(), Accept: 'text/event-stream' };
  if (lastID) headers['Last-Event-ID'] = lastID;
  const r = await fetch('/v1/events', { headers });
  if (r.status === 401) {
    askToken('The gateway refused the token; paste it again.');
    throw new Unauthorized('unauthorized');
  }
  if (r.status === 404) throw new NoStream('no event stream');
  if (!r.ok) throw new Error(await errorText(r));
  streamOpened = true;
  connState('live', 'ok');
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let frame = { event: 'message', data: [], id: '' };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') {
        if (frame.data.length) {
          if (frame.id) lastID = frame.id;
          dispatch(frame.event, frame.data.join('\n'), frame.id);
        }
        frame = { event: 'message', data: [], id: '' };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') frame.event = val;
      else if (field === 'data') frame.data.push(val);
      else if (field === 'id') frame.id = val;
    }
  }
  connState('reconnecting…', 'bad');
  return lastID;
}

function dispatch(name, raw, id) {
  let data;
  try {
    data = JSON.parse(raw);
  } catch {
    return;
  }
  if (name === 'dropped') {
    traceNote(data.dropped == null ? 'events were missed: ' + (data.reason || '') : `${data.dropped} events were missed`);
    return;
  }
  if (name === 'hook_result') {
    hookResult(data.context || {});
    return;
  }
  onEvent(name, data, id);
}

// ---- live trace ---------------------------------------------------------------

const traceList = $('trace');
const traceRows = new Map(); // point_id → row
let tracePaused = false;

const KNOWN_EVENTS = [
  'gateway:startup', 'session:start', 'session:end', 'session:reset', 'agent:start', 'agent:step', 'agent:end',
  'pre_tool_call', 'post_tool_call', 'pre_llm_call', 'post_llm_call', 'pre_api_request', 'post_api_request',
  'on_session_start', 'on_session_end', 'on_session_finalize', 'on_session_reset', 'subagent_stop',
  'pre_gateway_dispatch', 'pre_approval_request', 'post_approval_response', 'transform_tool_result',
  'transform_terminal_output', 'transform_llm_output', 'pre_compact', 'post_compact',
  'message', 'message_update', 'hook_result', 'dropped',
  'command:new', 'command:stop', 'command:status', 'command:queue', 'command:approve', 'command:deny', 'command:model',
  'command:whoami', 'command:help',
];

function traceNote(text) {
  traceList.prepend(el('li', { class: 'trace-note', text }));
}

// sessionChats maps a session id to its chat, learnt from the payloads
// that carry both (agent:start …), so that the trace's chat filter finds
// the points whose payload names only the session.
const sessionChats = new Map();

// chatOf names the chat (or, when unknown, the session) a payload
// belongs to.
function chatOf(c) {
  if (c.chat_id && c.session_id) sessionChats.set(c.session_id, c.chat_id);
  return c.chat_id || sessionChats.get(c.session_id) || c.session_id || c.session_key || '';
}

function summary(name, c) {
  return c.tool_name || c.message || c.user_message || c.text || c.command || c.response || c.assistant_response || '';
}

function trace(name, c, data) {
  if (tracePaused) return;
  if (!EVENT_NAMES.has(name)) {
    EVENT_NAMES.add(name);
    const sel = $('trace-event');
    const opts = [...sel.options].slice(1).map((o) => o.value).concat(name).sort();
    sel.replaceChildren(sel.options[0], ...opts.map((n) => el('option', { value: n, text: n })));
    sel.value = sel.dataset.want || '';
  }
  const at = data.at || '';
  const when = (at ? new Date(at) : new Date()).toLocaleTimeString();
  // an approval's payload has only the session key: whose session it
  // is comes beside it
  const owner = data.session ? sessionLabel(data.session) : '';
  const chatID = owner || chatOf(c);
  const row = el('li', { class: 'trace-row', 'data-event': name, 'data-chat': chatID + ' ' + (c.session_id || '') + ' ' + (c.session_key || '') });
  const details = el('details');
  const sum = el('summary', {},
    el('time', { text: when, title: at || '' }),
    el('span', { class: 'ev', text: name }),
    el('span', { class: 'chat', text: chatID, title: c.session_id || c.session_key || '' }),
    el('span', { class: 'sum', text: String(summary(name, c)).slice(0, 120) }),
    el('span', { class: 'outcomes' }));
  details.append(sum, el('pre', { class: 'payload', text: JSON.stringify(c, null, 2) }), el('div', { class: 'attachments' }));
  row.append(details);
  if (data.point_id) {
    row.dataset.point = data.point_id;
    traceRows.set(String(data.point_id), row);
  }
  filterRow(row);
  traceList.prepend(row);
  while (traceList.childElementCount > MAX_TRACE) {
    const old = traceList.lastElementChild;
    for (const [k, v] of traceRows) if (v === old) traceRows.delete(k);
    old.remove();
  }
}

// hookResult adds what each attachment answered to its hook point's row.
function hookResult(c) {
  if (tracePaused) return;
  const row = traceRows.get(String(c.point_id));
  if (!row) return;
  const list = row.querySelector('.attachments');
  const outcomes = row.querySelector('.outcomes');
  const table = el('table', {}, el('thead', {}, el('tr', {}, ...['hook', 'kind', 'type', 'outcome', 'detail', 'took'].map((h) => el('th', { text: h })))));
  const tbody = el('tbody');
  for (const a of c.attachments || []) {
    tbody.append(el('tr', { class: 'outcome-' + a.outcome },
      el('td', { text: a.name }), el('td', { text: a.kind }), el('td', { text: a.type }),
      el('td', { text: a.outcome }), el('td', { text: a.detail || '' }), el('td', { text: duration(a.duration_ms || 0) })));
    if (a.outcome && a.outcome !== 'none' && a.outcome !== 'allow') outcomes.append(el('span', { class: 'badge outcome-' + a.outcome, text: `${a.name}: ${a.outcome}` }));
  }
  table.append(tbody);
  list.replaceChildren(el('div', { class: 'tool-label', text: `Hooks (${duration(c.duration_ms || 0)} in all)` }), table);
}

function filterRow(row) {
  const ev = $('trace-event').value;
  const want = $('trace-chat').value.trim();
  row.hidden = (ev && row.dataset.event !== ev) || (want && !row.dataset.chat.includes(want));
}

function filterTrace() {
  $('trace-event').dataset.want = $('trace-event').value;
  for (const row of traceList.children) if (row.classList.contains('trace-row')) filterRow(row);
}
$('trace-event').addEventListener('change', filterTrace);
$('trace-chat').addEventListener('input', filterTrace);
$('trace-filters').addEventListener('submit', (e) => e.preventDefault());
$('trace-pause').addEventListener('click', (e) => {
  tracePaused = !tracePaused;
  e.target.setAttribute('aria-pressed', String(tracePaused));
  e.target.textContent = tracePaused ? 'Resume' : 'Pause';
});
$('trace-clear').addEventListener('click', () => {
  traceList.replaceChildren();
  traceRows.clear();
});

// ---- sessions -----------------------------------------------------------------

let openSession = '';

function when(t) {
  return t ? new Date(t).toLocaleString() : '';
}

async function loadSessions() {
  try {
    const r = await api('GET', '/v1/sessions?limit=100');
    if (!r.ok) return;
    const body = document.querySelector('#sessions tbody');
    body.replaceChildren();
    for (const s of (await r.json()).sessions || []) {
      const tr = el('tr', { tabIndex: 0, class: 'session-row', 'data-id': s.id },
        el('td', { text: s.platform }), el('td', { text: s.chat_id }), el('td', { text: s.user_name || s.user_id || '' }),
        el('td', { text: when(s.started_at) }), el('td', { class: 'last', text: s.last_message || '', title: when(s.last_message_at) }),
        el('td', { text: String(s.message_count ?? '') }), el('td', { text: s.ended_at ? 'ended' : 'active' }));
      tr.addEventListener('click', () => showSession(s.id));
      tr.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') showSession(s.id);
      });
      body.append(tr);
    }
  } catch { /* signed out */ }
}

async function showSession(id) {
  try {
    const r = await api('GET', `/v1/sessions/${encodeURIComponent(id)}`);
    if (!r.ok) {
      $('session-note').textContent = await errorText(r);
      return;
    }
    const j = await r.json();
    openSession = id;
    const s = j.session || {};
    $('session-detail').hidden = false;
    $('session-title').textContent = `${s.platform} · ${s.chat_id} · ${s.user_name || s.user_id || ''}`;
    $('session-end').disabled = !!s.ended_at;
    $('session-note').textContent = s.ended_at ? 'ended ' + when(s.ended_at) : '';
    const box = $('transcript');
    box.replaceChildren();
    for (const m of j.messages || []) {
      const body = el('div', { class: 'body' });
      if (m.role === 'tool') body.append(el('pre', { text: m.content || '' }));
      else body.append(render(m.content || ''));
      for (const tc of m.tool_calls || []) body.append(el('pre', { class: 'tool-args', text: `${tc.name} ${pretty(tc.arguments)}` }));
      const who = m.role + (m.tool_name ? ' · ' + m.tool_name : '');
      box.append(el('div', { class: 'msg ' + (m.role === 'user' ? 'me' : m.role === 'assistant' ? 'bot' : 'note') },
        el('div', { class: 'who', text: who, title: when(m.created_at) }), body));
    }
  } catch { /* signed out */ }
}

$('session-end').addEventListener('click', async () => {
  if (!openSession) return;
  try {
    const r = await api('POST', `/v1/sessions/${encodeURIComponent(openSession)}/end`);
    $('session-note').textContent = r.ok ? 'ended' : await errorText(r);
    if (r.ok) $('session-end').disabled = true;
    loadSessions();
  } catch { /* signed out */ }
});
$('sessions-refresh').addEventListener('click', loadSessions);

// ---- hooks ------------------------------------------------------------------

let hookEvents = [];

async function loadHooks() {
  try {
    const r = await api('GET', '/v1/hooks');
    if (!r.ok) return;
    hookEvents = (await r.json()).events || [];
    drawHooks();
  } catch { /* signed out */ }
}

function drawHooks() {
  const box = $('hooks');
  const all = $('hooks-empty').checked;
  box.replaceChildren();
  for (const ev of hookEvents) {
    const atts = ev.attachments || [];
    if (!atts.length && !all) continue;
    const sec = el('section', { class: 'hook-event', 'data-event': ev.event }, el('h3', { text: ev.event }));
    if (!atts.length) sec.append(el('p', { class: 'hint', text: 'nothing attached' }));
    for (const a of atts) {
      const out = el('div', { class: 'hook-answer', role: 'status' });
      const test = el('button', { type: 'button', text: 'Test this hook' });
      test.addEventListener('click', () => testHook(ev.event, a.id, out, test));
      sec.append(el('div', { class: 'hook', 'data-id': a.id },
        el('div', { class: 'hook-head' },
          el('strong', { text: a.name }),
          el('span', { class: 'badge', text: a.kind }),
          el('span', { class: 'badge', text: a.type }),
          el('span', { class: 'badge consent-' + a.consent, text: a.consent }),
          a.matcher ? el('span', { class: 'badge', text: 'matcher ' + a.matcher }) : null,
          a.priority ? el('span', { class: 'badge', text: 'priority ' + a.priority }) : null,
          test),
        el('div', { class: 'hint', text: a.source || '' }),
        out));
    }
    box.append(sec);
  }
  if (!box.childElementCount) box.append(el('p', { class: 'hint', text: 'No hooks are attached.' }));
}
$('hooks-empty').addEventListener('change', drawHooks);
$('hooks-refresh').addEventListener('click', loadHooks);

async function testHook(event, id, out, button) {
  button.disabled = true;
  out.replaceChildren(el('span', { class: 'hint', text: 'running…' }));
  try {
    const r = await api('POST', '/v1/hooks/test', { event, attachment_id: id });
    if (!r.ok) {
      out.replaceChildren(el('span', { class: 'error', text: await errorText(r) }));
      return;
    }
    out.replaceChildren();
    for (const res of (await r.json()).results || []) {
      out.append(el('div', { class: 'hook-result outcome-' + res.outcome },
        el('span', { class: 'badge outcome-' + res.outcome, text: res.outcome }),
        el('span', { text: ` ${res.detail || ''} (${duration(res.duration_ms || 0)})` }),
        res.answer != null ? el('pre', { text: JSON.stringify(res.answer, null, 2) }) : null));
    }
  } catch (err) {
    if (!(err instanceof Unauthorized)) out.replaceChildren(el('span', { class: 'error', text: String(err) }));
  } finally {
    button.disabled = false;
  }
}

// ---- start ---------------------------------------------------------------------

async function start() {
  if (started) return;
  started = true;
  try {
    await loadHistory();
  } catch (err) {
    if (err instanceof Unauthorized) {
      started = false;
      return;
    }
    note('history could not be loaded: ' + err, 'error');
  }
  probeViews();
  events();
  followOutbox();
  $('input').focus();
  document.body.dataset.ready = 'true';
}

if (token()) start();
else askToken('');
