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

// Asks `url` again every `every` ms while the tab shows (and at once when it shows again), handing
// each answer to `take`, which says what `state` reads now, or null to stop asking. A failed
// answer stops it and says so. The maps and the charts below follow the server this way.
function follow(url, accept, every, state, take) {
  let timer = null;
  let asking = false;
  let stopped = false;
  const ask = async () => {
    timer = null;
    if (stopped || document.hidden) return;
    let said;
    asking = true;
    try {
      const answer = await fetch(url, { credentials: 'same-origin', headers: { Accept: accept } });
      if (!answer.ok) throw new Error(String(answer.status));
      said = await take(answer);
    } catch {
      stopped = true;
      state.textContent = 'Updates stopped (signed out, or the server is unreachable): reload the page.';
      return;
    } finally {
      asking = false;
    }
    state.textContent = said.text;
    if (said.stop) stopped = true;
    else timer = setTimeout(ask, every);
  };
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && timer === null && !asking && !stopped) void ask();
  });
  timer = setTimeout(ask, every);
}

// Live maps: while a map of the Calls page has not ended, ask for the maps every 2 s and update
// their rows; stop once every map ended, and while the tab is hidden (ask again when it shows).
(function followMaps() {
  const card = document.getElementById('maps-card');
  if (!card || !card.dataset.live || !window.fetch) return;
  const show = (map) => {
    const row = card.querySelector(`tr[data-map="${map.id}"]`);
    if (!row) return false;
    const status = row.querySelector('[data-state]');
    status.textContent = map.state;
    status.className = `status ${map.tone}`;
    for (const cell of row.querySelectorAll('[data-count]')) cell.textContent = String(map.inputs[cell.dataset.count]);
    const settled = map.inputs.succeeded + map.inputs.failed + map.inputs.cancelled;
    const bar = row.querySelector('progress');
    bar.max = Math.max(map.inputs.received, 1);
    bar.value = settled;
    bar.textContent = `${settled} of ${map.inputs.received}`;
    bar.setAttribute('aria-label', `${settled} of ${map.inputs.received} inputs settled`);
    return true;
  };
  follow(card.dataset.live, 'application/json', 2000, document.getElementById('maps-state'), async (answer) => {
    const { maps } = await answer.json();
    const unseen = maps.filter((map) => !show(map)).length;
    if (maps.every((map) => map.ended)) return { text: 'Every map has ended.', stop: true };
    return {
      text: `Following: the counts change as the inputs run.${unseen > 0 ? ' A new map started: reload to see it.' : ''}`,
      stop: false,
    };
  });
})();

// Live charts: every data-every ms, ask the server for a workload's charts again (the same HTML
// it drew into the page) and put them in place of the old ones; not while the tab is hidden.
(function followCharts() {
  const box = document.getElementById('charts');
  if (!box || !box.dataset.live || !window.fetch || !window.DOMParser) return;
  const state = document.getElementById('charts-state');
  const every = Number(box.dataset.every) || 10000;
  const following = `One point a minute, as this server counted them; updated every ${every / 1000} s.`;
  state.textContent = following;
  follow(box.dataset.live, 'text/html', every, state, async (answer) => {
    const fresh = new DOMParser().parseFromString(await answer.text(), 'text/html');
    box.replaceChildren(...fresh.body.childNodes);
    return { text: following, stop: false };
  });
})();
