// The dashboard's only script: progressive enhancement of pages that work without it.
'use strict';

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
