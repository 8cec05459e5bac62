import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isEditorTemporary, isIgnoredEvent } from '../../cli/serve/ignore.js';
import { describeFiles } from '../../cli/serve/preview.js';
import { listFolders, ProjectWatcher } from '../../cli/serve/watcher.js';
import { tempDir } from '../helpers/config.js';

describe('svc serve: which file events count', () => {
  it('drops editor temporaries: vim, emacs, JetBrains, gedit, Chrome, LibreOffice, atomic writers', () => {
    for (const name of [
      '.app.py.swp',
      'pkg/.util.py.swo',
      'app.py.swx',
      '4913',
      'app.py~',
      '.#app.py',
      '#app.py#',
      'app.py___jb_tmp___',
      '.goutputstream-ABC123',
      'x.crswap',
      '.~lock.notes.odt#',
      'app.py.tmp.1234.5678',
    ]) {
      assert.ok(isEditorTemporary(name), name);
    }
    for (const name of ['app.py', 'swap.py', 'lib/tmp.py', 'data.tmp', '49130', 'notes.txt']) assert.ok(!isEditorTemporary(name), name);
  });

  it("drops what every bundle leaves out: .git, __pycache__, *.pyc, virtualenvs' usual names", () => {
    for (const name of [
      '.git/index',
      '__pycache__/app.cpython-311.pyc',
      'pkg/__pycache__',
      'app.pyc',
      '.venv/lib/x.py',
      'node_modules/a/b.js',
      '.svc/bundle.tar.gz',
      '.DS_Store',
    ]) {
      assert.ok(isIgnoredEvent(name), name);
    }
    for (const name of ['app.py', 'pkg/util.py', '.svcignore', 'templates/index.html', 'venvy.py']) assert.ok(!isIgnoredEvent(name), name);
  });
});

describe('describeFiles()', () => {
  it('names the changed files that are there now, the first three and how many more', () => {
    const root = tempDir('svc-files-');
    for (const name of ['a.py', 'b.py', 'c.py', 'd.py', 'e.py']) writeFileSync(path.join(root, name), '');
    assert.equal(describeFiles(['a.py'], root), 'a.py');
    assert.equal(describeFiles(['sedX1b2c3', 'a.py'], root), 'a.py', 'a temporary file gone by now is not named');
    assert.equal(describeFiles(['a.py', 'b.py', 'c.py', 'd.py', 'e.py'], root), 'a.py, b.py, c.py and 2 more');
    assert.equal(describeFiles(['gone.py'], root), 'gone.py', 'a deleted file is named when it is all that changed');
  });
});

describe('ProjectWatcher', () => {
  it('watches the folders it is given, reports changes in them, and stops watching folders no longer listed', async () => {
    const root = tempDir('svc-watch-');
    mkdirSync(path.join(root, 'pkg'));
    mkdirSync(path.join(root, 'data'));
    const seen: string[] = [];
    const watcher = new ProjectWatcher(root, (file) => seen.push(file));
    try {
      assert.deepEqual(watcher.sync(['pkg', 'data']).sort(), ['', 'data', 'pkg']);
      assert.deepEqual(watcher.sync(['pkg']), [], 'data is no longer watched; nothing new');
      assert.equal(watcher.size, 2);
      writeFileSync(path.join(root, 'pkg', 'util.py'), 'x = 1\n');
      writeFileSync(path.join(root, 'data', 'big.csv'), '1,2\n');
      writeFileSync(path.join(root, '.app.py.swp'), '');
      writeFileSync(path.join(root, 'app.py'), 'import svc\n');
      const deadline = Date.now() + 10_000;
      while (!(seen.includes('pkg/util.py') && seen.includes('app.py')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(seen.includes('pkg/util.py') && seen.includes('app.py'), seen.join(', '));
      assert.ok(!seen.includes('data/big.csv'), 'an unwatched folder');
      assert.ok(!seen.includes('.app.py.swp'), 'an editor temporary');
    } finally {
      watcher.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lists folders without the default exclusions, virtualenvs and excluded dirs (when no helper lists them)', async () => {
    const root = tempDir('svc-folders-');
    for (const dir of ['pkg/sub', '.git/objects', 'env/lib', 'node_modules/x', 'state/bundles'])
      mkdirSync(path.join(root, dir), { recursive: true });
    writeFileSync(path.join(root, 'env', 'pyvenv.cfg'), 'home = /usr\n');
    assert.deepEqual((await listFolders(root, [path.join(root, 'state')])).sort(), ['pkg', 'pkg/sub']);
  });
});
