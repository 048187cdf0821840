// The visitor's chat page of an agentrt widget (no build step, no libraries).
// The session token arrives in the fragment (#session=<token>), leaves the
// address bar at once and lives in sessionStorage (a reload keeps it). Answers
// stream over SSE read with fetch, since EventSource cannot send a bearer; a
// dropped stream reconnects with Last-Event-ID and events are deduplicated by
// their sequence, so no message is lost or shown twice. Between stored events
// the stream sends `delta` frames (no id, never replayed): the answer's text as
// the model writes it, shown in a pending bubble until the ASSISTANT_MESSAGE
// event, which carries the whole answer and replaces it. A conversation that
// ends FAILED or CANCELLED takes no more messages: the page forgets it (its
// messages stay above a note) and the next message starts a new one.
'use strict';
(() => {
  const KEY = 'agentrt.widget';
  /** The Status code of a message to a conversation that has ended (FAILED, CANCELLED, erased). */
  const FAILED_PRECONDITION = 9;
  const $ = (id) => document.getElementById(id);
  const log = $('chat-log');
  const form = $('chat-form');
  const input = $('chat-input');
  const send = $('chat-send');
  const status = $('chat-status');

  const state = {
    token: null,
    objectiveId: null,
    lastSequence: 0,
    allowApprovals: false,
    streaming: false,
    /** Aborts the open stream's request, and ends its wait between requests (the conversation it reads was forgotten). */
    streamAbort: null,
    wake: null,
    pendingMessages: 0,
    finished: true,
    stopped: false,
    /** Tool names by tool call id, from the answers' toolCalls: the TOOL_* events name the id only. */
    toolNames: new Map(),
    tools: new Map(),
    /** Pending answers by model turn: { line, text (its Text node) }, until their ASSISTANT_MESSAGE. */
    pending: new Map(),
    /** The newest model turn whose answer is final: a late delta of it is dropped. */
    answeredTurn: 0,
    /** A message was sent from this page (events after it are news to the visitor, not a replay on load). */
    sentHere: false,
  };

  // ---- session ------------------------------------------------------------

  function loadSession() {
    let saved = {};
    try { saved = JSON.parse(sessionStorage.getItem(KEY) || '{}') || {}; } catch { saved = {}; }
    const hash = new URLSearchParams(location.hash.slice(1));
    const fromHash = hash.get('session');
    if (fromHash) {
      history.replaceState(null, '', location.pathname + location.search);
      if (fromHash !== saved.token) saved = { token: fromHash };
      // widget.js keeps the conversation in the embedding page, for browsers that deny storage to frames.
      if (hash.get('objective')) saved.objectiveId = hash.get('objective');
    }
    state.token = saved.token || null;
    state.objectiveId = saved.objectiveId || null;
    save();
  }

  function save() {
    if (parent !== window) parent.postMessage({ type: 'agentrt-widget:objective', objectiveId: state.objectiveId }, '*');
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ token: state.token, objectiveId: state.objectiveId }));
    } catch { /* storage may be unavailable; the session then lasts for this page only */ }
  }

  // ---- HTTP ---------------------------------------------------------------

  class HttpError extends Error {
    constructor(status, message, code) { super(message); this.status = status; this.code = code; }
  }

  async function api(method, path, body) {
    const headers = { Authorization: `Bearer ${state.token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = null; }
    if (!res.ok) throw new HttpError(res.status, (json && json.message) || res.statusText, json && json.code);
    return json;
  }

  function plainError(err) {
    if (err instanceof HttpError) {
      if (err.status === 401) return 'This chat session has expired or is not valid. Please reload the page you came from to start a new one.';
      if (err.status === 403) return 'This chat is not allowed to do that.';
      if (err.status === 404) return 'This conversation could not be found.';
      if (err.status === 429) return 'Too many messages at once. Please wait a moment and try again.';
      // The server's words name objectives and statuses: the visitor gets plain ones.
      if (err.code === FAILED_PRECONDITION) return 'This chat cannot start a conversation right now. Please try again later.';
      if (err.status >= 500) return 'The chat service is having trouble. Please try again in a moment.';
      return `That did not work: ${err.message}`;
    }
    return 'The chat service could not be reached. Please check your connection and try again.';
  }

  // ---- rendering ------------------------------------------------------------

  function scrollToEnd() { log.scrollTop = log.scrollHeight; }

  function message(role, text) {
    const p = document.createElement('p');
    p.className = `msg msg-${role}`;
    const who = document.createElement('span');
    who.className = 'sr-only';
    who.textContent = role === 'user' ? 'You: ' : 'Assistant: ';
    p.append(who, document.createTextNode(text));
    p.dataset.role = role;
    return p;
  }

  function addMessage(role, text) {
    const p = message(role, text);
    log.append(p);
    scrollToEnd();
    return p;
  }

  // ---- streamed answers -------------------------------------------------------
  //
  // The log is role=log (aria-live polite, additions): every text node added
  // to it is read out. A bubble growing delta by delta would be read in
  // fragments, or over and over. aria-busy on the bubble is meant to defer
  // that, but screen readers honour it unevenly inside a live region. So the
  // pending bubble is aria-hidden (outside the accessibility tree, and so
  // outside the live region: its changes are never announced) and the final
  // answer is a new element put in its place, which the log announces once,
  // whole, as it always did. Meanwhile the status line says the assistant is
  // answering.

  /** Places a delta's text at its offset in its turn's pending bubble (made on the turn's first text). */
  function grow(delta) {
    const turn = Number(delta.modelTurn);
    const offset = Number(delta.offset);
    const text = typeof delta.text === 'string' ? delta.text : '';
    if (!Number.isInteger(turn) || !Number.isInteger(offset) || offset < 0 || turn <= state.answeredTurn) return;
    let bubble = state.pending.get(turn);
    const shown = bubble ? bubble.text.data : '';
    // Text after a gap (deltas missed over a reconnect or before a reload) waits for the final message,
    // rather than showing an answer with words missing.
    if (offset > shown.length) return;
    // Offset 0 is the start of the call (or of its retry): the text so far is replaced, not appended to.
    // Elsewhere the text overwrites what is at its place, so a repeated delta never doubles text.
    const next = offset === 0 ? text : shown.slice(0, offset) + text + shown.slice(offset + text.length);
    // Follow the growing answer only from the end of the log: a visitor who scrolled up to read stays put.
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 32;
    if (!bubble) {
      if (!next) return;
      const line = message('assistant', '');
      line.classList.add('msg-pending');
      line.setAttribute('aria-hidden', 'true');
      log.append(line);
      bubble = { line, text: line.lastChild };
      state.pending.set(turn, bubble);
    }
    bubble.text.data = next;
    if (atEnd) scrollToEnd();
  }

  /** Shows a final answer: in place of the oldest pending bubble if any (removed when the answer has no text: tool calls only). */
  function answer(content) {
    const turns = [...state.pending.keys()];
    const turn = turns.length ? Math.min(...turns) : 0;
    const bubble = state.pending.get(turn);
    if (bubble) {
      state.pending.delete(turn);
      state.answeredTurn = Math.max(state.answeredTurn, turn);
    }
    if (!content) {
      if (bubble) bubble.line.remove();
      return;
    }
    if (!bubble) return void addMessage('assistant', content);
    bubble.line.replaceWith(message('assistant', content));
    scrollToEnd();
  }

  /** Removes the text of calls that will never have a final message (a failed call, the objective's end). */
  function dropPending() {
    for (const bubble of state.pending.values()) bubble.line.remove();
    state.pending.clear();
  }

  function addNote(text, isError) {
    const p = document.createElement('p');
    p.className = isError ? 'note note-error' : 'note';
    p.textContent = text;
    log.append(p);
    scrollToEnd();
    return p;
  }

  const friendly = (name) => String(name || 'a tool').replace(/[_-]+/g, ' ').trim();

  /** The activity line of a tool call, made on first sight of its id. */
  function tool(toolCallId) {
    let entry = state.tools.get(toolCallId);
    if (!entry) {
      const name = friendly(state.toolNames.get(toolCallId));
      entry = { name, line: addNote(`Looking up ${name}…`, false) };
      entry.line.dataset.toolCallId = toolCallId;
      state.tools.set(toolCallId, entry);
    }
    return entry;
  }

  /**
   * Whether a new approval question may take the focus: only when it is news
   * (it follows a message sent from this page, so not a replay on load), the
   * visitor is in the chat (never pull focus out of the embedding page) and
   * not writing (text in the message box, where Enter would then approve).
   */
  function mayTakeFocus() {
    if (!state.sentHere || !document.hasFocus()) return false;
    return !(document.activeElement === input && input.value.trim() !== '');
  }

  function askApproval(toolCallId) {
    const entry = tool(toolCallId);
    entry.waiting = true;
    const objectiveId = state.objectiveId;
    status.textContent = state.allowApprovals ? 'Waiting for your answer…' : 'Waiting for a team member…';
    if (!state.allowApprovals) {
      entry.line.textContent = `Waiting for a team member to allow ${entry.name}…`;
      return;
    }
    entry.line.textContent = '';
    entry.line.className = 'note approval';
    entry.line.setAttribute('role', 'group');
    const question = document.createElement('span');
    question.id = `approve-q-${toolCallId}`;
    question.textContent = `The assistant wants to use ${entry.name}. Do you allow it?`;
    entry.line.setAttribute('aria-labelledby', question.id);
    const approve = document.createElement('button');
    approve.type = 'button';
    approve.textContent = 'Approve';
    const deny = document.createElement('button');
    deny.type = 'button';
    deny.className = 'secondary';
    deny.textContent = 'Deny';
    const decide = async (verdict) => {
      approve.disabled = deny.disabled = true;
      try {
        await api('PUT', `/api/objectives/${encodeURIComponent(objectiveId)}/tool_calls/${encodeURIComponent(toolCallId)}/${verdict}`, {});
      } catch (err) {
        // Decided elsewhere, or the conversation ended meanwhile: the question is over either way.
        if (err instanceof HttpError && err.code === FAILED_PRECONDITION) return void settle(entry, `${entry.name}: no longer waiting for an answer`);
        approve.disabled = deny.disabled = false;
        addNote(plainError(err), true);
        return;
      }
      setBusy(true);
      input.focus();
    };
    approve.addEventListener('click', () => decide('approve'));
    deny.addEventListener('click', () => decide('deny'));
    entry.line.append(question, approve, deny);
    // Otherwise it is announced: the log reads the question as it is added, and the status says where to answer.
    if (mayTakeFocus()) approve.focus();
    else status.textContent = `The assistant asks to use ${entry.name}: Approve or Deny is in the conversation.`;
  }

  /** Puts `text` in a tool call's line, in place of its approval question (and buttons) if it had one. */
  function settle(entry, text, isError) {
    entry.waiting = false;
    entry.line.className = isError ? 'note note-error' : 'note';
    entry.line.removeAttribute('role');
    entry.line.removeAttribute('aria-labelledby');
    entry.line.textContent = text;
  }

  function render(event) {
    const data = event.data || {};
    const kind = String(data.type || '').replace('OBJECTIVE_EVENT_TYPE_', '');
    switch (kind) {
      case 'USER_MESSAGE':
        state.pendingMessages = Math.max(0, state.pendingMessages - 1);
        state.finished = false;
        addMessage('user', (data.userMessage && data.userMessage.content) || '');
        setBusy(true);
        break;
      case 'ASSISTANT_MESSAGE': {
        const msg = data.assistantMessage || {};
        answer(msg.content || '');
        for (const call of msg.toolCalls || []) if (call.id) state.toolNames.set(call.id, call.functionName);
        break;
      }
      case 'TOOL_CALLED': tool(data.toolCalled.toolCallId); break;
      case 'TOOL_RESULT': { const entry = tool(data.toolResult.toolCallId); settle(entry, `${entry.name}: Done`); break; }
      case 'TOOL_ERROR': {
        const entry = tool(data.toolError.toolCallId);
        settle(entry, `${entry.name}: ${data.toolError.message || 'The tool failed.'}`, true);
        break;
      }
      case 'TOOL_APPROVAL_REQUESTED': askApproval(data.toolApprovalRequested.toolCallId); break;
      case 'TOOL_APPROVED': { const entry = tool(data.toolApproved.toolCallId); settle(entry, `${entry.name}: allowed`); break; }
      case 'TOOL_DENIED': { const entry = tool(data.toolDenied.toolCallId); settle(entry, `${entry.name}: not allowed`); break; }
      case 'ERROR': {
        dropPending();
        const err = data.error || {};
        if (err.retryAt) addNote('The assistant is having trouble answering and will try again shortly.', false);
        else addNote(err.message || 'Sorry, something went wrong.', true);
        break;
      }
      case 'CANCELLED': dropPending(); addNote('The conversation was stopped.', false); break;
      case 'FINALIZED': {
        dropPending();
        state.finished = true;
        const end = (data.finalized && data.finalized.status) || '';
        if (/FAILED/.test(end)) addNote('The assistant could not finish this answer.', true);
        // COMPLETED takes follow-ups; FAILED and CANCELLED take no more messages.
        if (/FAILED|CANCELLED/.test(end)) endConversation('Your next message starts a new conversation.');
        setBusy(false);
        break;
      }
      default: break;
    }
  }

  function setBusy(busy) {
    status.textContent = busy ? 'The assistant is answering…' : '';
  }

  // ---- the event stream -----------------------------------------------------

  const sleep = (ms) => new Promise((resolve) => { state.wake = resolve; setTimeout(resolve, ms); });

  /** Waits `ms`, or less if the browser comes back online (or the conversation is forgotten: state.wake). */
  function pause(ms) {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); removeEventListener('online', done); resolve(); };
      const timer = setTimeout(done, ms);
      addEventListener('online', done);
      state.wake = done;
    });
  }

  /** Reads one SSE response of objective `id`; returns when it ends (throws when the connection drops or is aborted). */
  async function readStream(res, id) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let data = [];
    let type = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === '') {
          if (data.length) dispatch(id, type || 'message', data.join('\n'));
          data = [];
          type = '';
          continue;
        }
        // "field: value" (one space after the colon is not part of the value); a line starting with ":" is a comment.
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
        if (field === 'data') data.push(value);
        else if (field === 'event') type = value;
      }
    }
  }

  /** One SSE frame: a stored event (`message`) or a delta of the answer being written (never counted in lastSequence). */
  function dispatch(id, type, text) {
    if (state.objectiveId !== id) return; // of a conversation this page has forgotten
    let event;
    try { event = JSON.parse(text); } catch { return; }
    if (type === 'delta') {
      try { grow(event || {}); } catch { /* a delta of an unexpected shape is skipped */ }
      return;
    }
    if (type !== 'message' || !event) return; // a kind of frame this page does not know
    const sequence = Number(event.sequence);
    if (!Number.isFinite(sequence) || sequence <= state.lastSequence) return; // seen already
    state.lastSequence = sequence;
    try { render(event); } catch { /* an event of an unexpected shape is skipped, not fatal to the stream */ }
  }

  /** Keeps one stream of the conversation open until it rests (FINALIZED, nothing sent since) or is forgotten. */
  async function stream() {
    if (state.streaming || !state.objectiveId) return;
    const id = state.objectiveId;
    state.streaming = true;
    let wait = 250;
    let empties = 0;
    try {
      while (!state.stopped && state.objectiveId === id) {
        let dropped = false;
        try {
          const headers = { Authorization: `Bearer ${state.token}`, Accept: 'text/event-stream' };
          if (state.lastSequence > 0) headers['Last-Event-ID'] = String(state.lastSequence);
          const abort = new AbortController();
          state.streamAbort = abort;
          const res = await fetch(`/api/objectives/${encodeURIComponent(id)}/events/stream`, { headers, cache: 'no-store', signal: abort.signal });
          if (res.status === 204) {
            // Finished with nothing new. A message just sent may not be readable yet: ask again a few times.
            state.finished = true;
            if (state.pendingMessages > 0 && empties < 5) { empties += 1; await sleep(250 * 2 ** empties); continue; }
            state.pendingMessages = 0;
            setBusy(false);
          }
          else if (!res.ok) {
            const err = new HttpError(res.status, res.statusText);
            if (res.status < 500 && res.status !== 429) throw err;
            dropped = true;
          } else {
            if (status.dataset.reconnecting) { delete status.dataset.reconnecting; setBusy(!state.finished); }
            await readStream(res, id);
            wait = 250;
            empties = 0;
            // Closed before the objective rested (a node stopping, a proxy): come back after a pause.
            if (!state.finished) dropped = true;
          }
        } catch (err) {
          if (err instanceof HttpError && err.status !== 429 && err.status < 500) throw err;
          dropped = true;
        }
        if (state.objectiveId !== id) return;
        if (!dropped && state.finished && state.pendingMessages === 0) return;
        if (dropped) {
          status.dataset.reconnecting = '1';
          status.textContent = 'Connection lost. Reconnecting…';
          await pause(wait);
          wait = Math.min(wait * 2, 5000);
        }
      }
    } catch (err) {
      if (state.objectiveId === id) {
        addNote(plainError(err), true);
        if (err instanceof HttpError && err.status === 401) stop();
        if (err instanceof HttpError && err.status === 404) forgetObjective();
      }
    } finally {
      state.streaming = false;
      state.streamAbort = null;
      // The conversation changed while this stream ran (a new one began as the old one ended): stream the new one.
      if (state.objectiveId && state.objectiveId !== id && !state.stopped) stream();
    }
  }

  /** The next message starts a new conversation (this one is gone or ended); its stream stops. */
  function forgetObjective() {
    state.objectiveId = null;
    state.lastSequence = 0;
    state.pendingMessages = 0;
    state.finished = true;
    if (state.streamAbort) state.streamAbort.abort();
    if (state.wake) state.wake();
    dropPending();
    state.answeredTurn = 0;
    save();
    setBusy(false);
  }

  /**
   * The conversation ended (FAILED or CANCELLED): it takes no more messages.
   * Its questions are settled (no button of it stays live), its messages stay
   * above `note`, and the page forgets it, so neither the next message nor a
   * reload goes to it.
   */
  function endConversation(note) {
    for (const entry of state.tools.values()) if (entry.waiting) settle(entry, `${entry.name}: not run, the conversation ended`);
    forgetObjective();
    addNote(note, false).classList.add('note-divider');
  }

  function stop() {
    state.stopped = true;
    input.disabled = send.disabled = true;
    setBusy(false);
  }

  // ---- sending --------------------------------------------------------------

  async function submit() {
    const content = input.value.trim();
    if (!content || state.stopped || send.disabled) return;
    send.disabled = true;
    try {
      const current = state.objectiveId;
      if (current) {
        try {
          await api('POST', `/api/objectives/${encodeURIComponent(current)}/messages`, { content });
        } catch (err) {
          // It ended since the page last heard (cancelled, failed), or is gone (erased, past retention): the
          // message starts a new conversation.
          if (!(err instanceof HttpError && (err.code === FAILED_PRECONDITION || err.status === 404))) throw err;
          if (state.objectiveId === current) endConversation('This conversation has ended. Your message starts a new one.');
        }
      }
      if (!state.objectiveId) {
        const objective = await api('POST', '/api/objectives', { content });
        state.objectiveId = (objective && objective.metadata && objective.metadata.id) || (objective && objective.id);
        save();
      }
      state.pendingMessages += 1;
      state.sentHere = true;
      input.value = '';
      setBusy(true);
      stream();
    } catch (err) {
      addNote(plainError(err), true);
      if (err instanceof HttpError && err.status === 401) stop();
    } finally {
      if (!state.stopped) send.disabled = false;
      input.focus();
    }
  }

  form.addEventListener('submit', (event) => { event.preventDefault(); submit(); });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });

  // ---- widget settings, theme, size -------------------------------------------

  function applyConfig(config) {
    if (config.title) { $('chat-title').textContent = config.title; document.title = config.title; }
    if (config.greeting) { const g = $('chat-greeting'); g.textContent = config.greeting; g.hidden = false; }
    const theme = String(config.theme || '').toLowerCase();
    document.documentElement.dataset.theme = theme.includes('dark') ? 'dark' : theme.includes('light') ? 'light' : 'auto';
    state.allowApprovals = config.allowVisitorApprovals === true;
  }

  /** The widget's settings, which the host places in the page as a JSON data block. */
  function loadConfig() {
    const block = document.getElementById('agentrt-widget-config');
    try { return JSON.parse((block && block.textContent) || '{}') || {}; } catch { return {}; }
  }

  function reportHeight() {
    if (parent === window) return;
    // The height is no secret, so any embedding page may read it; widget.js checks our origin.
    parent.postMessage({ type: 'agentrt-widget:height', height: Math.ceil(document.documentElement.scrollHeight) }, '*');
  }

  function start() {
    new ResizeObserver(reportHeight).observe(document.body);
    loadSession();
    if (!state.token) {
      addNote('This chat needs a session. Please open it from the website you came from.', true);
      stop();
      return;
    }
    applyConfig(loadConfig());
    if (state.objectiveId) stream();
  }

  start();
})();
