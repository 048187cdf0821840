// The chat page's colours (chat.css custom properties) meet WCAG 2 AA in both
// themes: 4.5:1 for text on its background, 3:1 for focus rings and borders.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR } from './support/fake-widget-host';

const css = readFileSync(path.join(ASSETS_DIR, 'chat.css'), 'utf8');

/** The custom properties of the first rule whose selector matches `selector`. */
function palette(selector: RegExp): Record<string, string> {
  const rule = new RegExp(`${selector.source}\\s*\\{([^}]*)\\}`).exec(css);
  assert.ok(rule, `chat.css has a rule for ${selector.source}`);
  return Object.fromEntries([...rule[1].matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1], m[2]]));
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const TEXT: Array<[string, string]> = [['fg', 'bg'], ['muted', 'bg'], ['note-fg', 'bg'], ['error-fg', 'bg'], ['user-fg', 'user-bg'], ['bot-fg', 'bot-bg'], ['accent-fg', 'accent'], ['fg', 'bot-bg']];
const NON_TEXT: Array<[string, string]> = [['focus', 'bg'], ['border', 'bg']];

describe('widget page colours', () => {
  const themes = { light: palette(/:root/), dark: palette(/:root\[data-theme="dark"\]/), auto: palette(/:root\[data-theme="auto"\]/) };

  it('gives the automatic dark theme the same colours as the dark theme', () => {
    assert.deepEqual(themes.auto, themes.dark);
  });

  for (const [theme, colours] of Object.entries(themes).filter(([name]) => name !== 'auto')) {
    it(`meets WCAG AA contrast in the ${theme} theme`, () => {
      for (const [fg, bg] of TEXT) assert.ok(contrast(colours[fg], colours[bg]) >= 4.5, `${theme}: --${fg} on --${bg} is ${contrast(colours[fg], colours[bg]).toFixed(2)}:1`);
      for (const [fg, bg] of NON_TEXT) assert.ok(contrast(colours[fg], colours[bg]) >= 3, `${theme}: --${fg} on --${bg} is ${contrast(colours[fg], colours[bg]).toFixed(2)}:1`);
    });
  }
});
