// agentrt widget loader: <script src="https://<widget host>/widget.js" data-session="<token>"></script>
// Adds an iframe of the chat page (from this script's own origin) after the
// script tag, or in the element named by data-target, and sizes it from the
// page's height messages (only messages from that iframe and origin count).
(() => {
  'use strict';
  const script = document.currentScript;
  if (!script || !script.src) return;
  const origin = new URL(script.src).origin;
  const token = script.dataset.session;
  if (!token) { console.error('agentrt widget: the script tag needs data-session="<token>"'); return; }

  // The conversation's id, kept here so a reload of this page resumes it (frames may be denied storage).
  const key = `agentrt.widget.${origin}.${token.slice(-24)}`;
  const stored = (() => { try { return sessionStorage.getItem(key); } catch { return null; } })();

  const frame = document.createElement('iframe');
  frame.src = `${origin}/#session=${encodeURIComponent(token)}${stored ? `&objective=${encodeURIComponent(stored)}` : ''}`;
  frame.title = script.dataset.title || 'Chat';
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.style.cssText = 'border:0;width:100%;max-width:' + (script.dataset.width || '420px') + ';height:480px;display:block;color-scheme:normal';
  const maxHeight = Number(script.dataset.maxHeight) || 720;

  addEventListener('message', (event) => {
    if (event.origin !== origin || event.source !== frame.contentWindow) return;
    const msg = event.data;
    if (msg && msg.type === 'agentrt-widget:objective') {
      try {
        if (typeof msg.objectiveId === 'string') sessionStorage.setItem(key, msg.objectiveId);
        else sessionStorage.removeItem(key);
      } catch { /* no storage: a reload starts a new conversation */ }
      return;
    }
    if (!msg || msg.type !== 'agentrt-widget:height' || !Number.isFinite(msg.height)) return;
    frame.style.height = `${Math.max(120, Math.min(maxHeight, Math.ceil(msg.height)))}px`;
  });

  const target = script.dataset.target && document.querySelector(script.dataset.target);
  if (target) target.append(frame);
  else script.after(frame);
})();
