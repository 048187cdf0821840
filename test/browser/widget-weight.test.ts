// The page a visitor loads (chat.html, its CSS and script) and the loader
// (widget.js) together weigh under 50 KB gzip-compressed (issue 26 target).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ASSETS_DIR } from './support/fake-widget-host';

describe('widget page weight', () => {
  it('all asset files together are under 50 KB gzip-compressed', () => {
    const files = readdirSync(ASSETS_DIR).filter((name) => /\.(html|css|js)$/.test(name));
    assert.deepEqual(files.filter((f) => ['chat.html', 'chat.css', 'chat.js', 'widget.js'].includes(f)).sort(), ['chat.css', 'chat.html', 'chat.js', 'widget.js']);
    const total = files.reduce((sum, name) => sum + gzipSync(readFileSync(path.join(ASSETS_DIR, name)), { level: 9 }).length, 0);
    assert.ok(total < 50 * 1024, `the widget's assets weigh ${total} bytes gzip-compressed`);
  });
});
