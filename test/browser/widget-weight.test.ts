// The page a visitor loads (chat.html, its CSS and script) and the loader
// (widget.js) together weigh under 50 KB gzip-compressed (issue 26 target).
import assert from 'node:assert/strict';
import { assetWeights } from './support/fake-widget-host';

describe('widget page weight', () => {
  it('all asset files together are under 50 KB gzip-compressed', () => {
    const weights = assetWeights();
    assert.deepEqual(Object.keys(weights).filter((f) => ['chat.html', 'chat.css', 'chat.js', 'widget.js'].includes(f)).sort(), ['chat.css', 'chat.html', 'chat.js', 'widget.js']);
    const total = Object.values(weights).reduce((sum, bytes) => sum + bytes, 0);
    assert.ok(total < 50 * 1024, `the widget's assets weigh ${total} bytes gzip-compressed`);
  });
});
