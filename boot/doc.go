// Package boot is the BOOT.md startup checklist: a built-in hook on
// gateway:startup that, when $HERALD_HOME/BOOT.md exists and is not blank,
// runs it once through the gateway's own agent — the same resolved model,
// endpoint and credentials as every chat, which is what Hermes' first
// built-in got wrong — with platform "gateway", no history, at most 20
// iterations and no approver (dangerous commands are denied).
//
// Promises:
//
//   - It never delays startup: the hook returns at once and the agent runs
//     on a goroutine the Hook owns; Close cancels it and waits.
//   - It logs, exactly: "Running BOOT.md (N chars)" (N counts characters),
//     then "boot-md completed (nothing to report)" when the reply is
//     [SILENT] (trimmed), "boot-md completed: <first 200 characters>" otherwise, or
//     "boot-md agent failed: <error>". A failure (or a panic, which is
//     recovered) never stops the gateway.
//   - The reply is only logged; the checklist sends messages itself, with
//     the send_message tool.
//   - Deleting BOOT.md disables it; boot.enabled: false detaches the hook.
package boot
