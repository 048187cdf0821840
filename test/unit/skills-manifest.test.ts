import assert from 'node:assert/strict';
import {
  oneLine, skillLine, skillsManifest, SKILL_DESCRIPTION_MAX_CHARACTERS, SKILLS_MANIFEST_HEADING, SKILLS_MANIFEST_MAX_BYTES, SKILLS_MANIFEST_MAX_ENTRIES,
  type SkillSummary,
} from '../../src/memory/skills-manifest';

const INSTRUCTION = 'Before you do what a skill describes, call load_skill with its key (exactly as listed; keys are case-sensitive) to get its full instructions.';

function skills(count: number, description = 'd'): SkillSummary[] {
  return Array.from({ length: count }, (_, index) => ({ key: `skill-${String(index).padStart(4, '0')}`, title: `Skill ${index}`, description }));
}

describe('skillsManifest(listed, total)', () => {
  it('is null when the stack holds no skills', () => {
    assert.equal(skillsManifest([], 0), null);
  });

  it('lists each skill as "- key: title — description" under the heading and the load_skill instruction', () => {
    const text = skillsManifest([
      { key: 'refunds', title: 'Refunds', description: 'How to refund an order' },
      { key: 'shipping', title: null, description: 'Carriers and delays' },
      { key: 'tone', title: 'Tone of voice', description: null },
      { key: 'bare', title: null, description: null },
    ], 4);
    assert.equal(text, [
      SKILLS_MANIFEST_HEADING,
      INSTRUCTION,
      '- refunds: Refunds — How to refund an order',
      '- shipping — Carriers and delays',
      '- tone: Tone of voice',
      '- bare',
    ].join('\n'));
  });

  it(`lists at most ${SKILLS_MANIFEST_MAX_ENTRIES} skills and says how many more exist and that load_skill takes any key`, () => {
    const text = skillsManifest(skills(SKILLS_MANIFEST_MAX_ENTRIES), 300)!;
    const lines = text.split('\n');
    assert.equal(lines.filter((line) => line.startsWith('- ')).length, SKILLS_MANIFEST_MAX_ENTRIES);
    assert.equal(lines.at(-1), '200 more skills are not listed here; load_skill takes any skill key, listed or not.');
  });

  it('says "1 more skill is" for one left out', () => {
    const text = skillsManifest(skills(2), 3)!;
    assert.equal(text.split('\n').at(-1), '1 more skill is not listed here; load_skill takes any skill key, listed or not.');
  });

  it(`stays within ${SKILLS_MANIFEST_MAX_BYTES} bytes, counting the skills that did not fit as unlisted`, () => {
    const long = 'x'.repeat(SKILL_DESCRIPTION_MAX_CHARACTERS);
    const text = skillsManifest(skills(SKILLS_MANIFEST_MAX_ENTRIES, long), SKILLS_MANIFEST_MAX_ENTRIES)!;
    assert.ok(Buffer.byteLength(text) <= SKILLS_MANIFEST_MAX_BYTES, String(Buffer.byteLength(text)));
    const listed = text.split('\n').filter((line) => line.startsWith('- ')).length;
    assert.ok(listed < SKILLS_MANIFEST_MAX_ENTRIES && listed > 50, String(listed));
    assert.equal(text.split('\n').at(-1), `${SKILLS_MANIFEST_MAX_ENTRIES - listed} more skills are not listed here; load_skill takes any skill key, listed or not.`);
  });

  it('honours smaller bounds', () => {
    const text = skillsManifest(skills(10), 10, { maxEntries: 3 })!;
    assert.equal(text.split('\n').filter((line) => line.startsWith('- ')).length, 3);
    assert.match(text, /7 more skills are not listed here/);
  });
});

describe('skillLine(skill)', () => {
  it('puts a multi-line description on one line, cut with an ellipsis', () => {
    const line = skillLine({ key: 'k', title: 'Title\nwith a break', description: `first line\n\nsecond   line ${'y'.repeat(300)}` });
    assert.ok(!line.includes('\n'));
    assert.ok(line.startsWith('- k: Title with a break — first line second line yyy'), line);
    const description = line.split(' — ')[1];
    assert.equal(description.length, SKILL_DESCRIPTION_MAX_CHARACTERS);
    assert.ok(description.endsWith('…'));
  });
});

describe('oneLine(text, max)', () => {
  it('keeps short text as it is, trimmed', () => {
    assert.equal(oneLine('  short  ', 10), 'short');
  });
});
