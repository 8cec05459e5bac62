// The dashboard's only script: progressive enhancement of pages that work without it.

// Sign-in links carry their secret after "#", which browsers never send: post it for the person.
(function signInFromLink() {
  const form = document.getElementById('sign-in');
  if (!form || location.hash.length < 2) return;
  form.elements.namedItem('link').value = location.href;
  history.replaceState(null, '', location.pathname + location.search);
  form.submit();
})();

// Copy buttons: shown only where the clipboard works; each names the element whose text it copies.
for (const button of document.querySelectorAll('button[data-copy]')) {
  if (!navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy);
    const text = source.value ?? source.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      source.select?.();
      button.textContent = 'Select and copy';
    }
  });
}

// Live logs: the page holds the kept lines; the stream sends them again, then each new one, so the
// box is refilled on every (re)connection and shows each line once.
(function followLogs() {
  const box = document.getElementById('log');
  if (!box || !box.dataset.follow || !window.EventSource) return;
  const state = document.getElementById('follow-state');
  const source = new EventSource(box.dataset.follow);
  const format = (line) => `${line.time.slice(11, 19)} ${line.container} ${line.stream}: ${line.text}\n`;
  source.addEventListener('open', () => {
    box.textContent = '';
    state.textContent = 'Following: new lines appear as they come.';
  });
  source.addEventListener('log', (event) => {
    const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
    box.append(format(JSON.parse(event.data)));
    if (atBottom) box.scrollTop = box.scrollHeight;
  });
  source.addEventListener('end', () => {
    source.close();
    state.textContent = 'The deployment ended: no more lines will come.';
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CONNECTING) state.textContent = 'Reconnecting…';
  });
})();
