// The skills manifest an objective's system prompt carries (issue 25 item 2):
// one line per skill (key, title, description) under a heading, bounded in
// entries and bytes, with a closing line counting the skills left out (all
// still reachable by `load_skill`). Pure: the caller reads the entries.

/** A skill as the manifest shows it: the topmost layer's entry for its key. */
export interface SkillSummary {
  key: string;
  title: string | null;
  description: string | null;
}

/** Most skills listed; the store reads no more than this. */
export const SKILLS_MANIFEST_MAX_ENTRIES = 100;
/** Most UTF-8 bytes of the whole manifest text, heading and closing line included. */
export const SKILLS_MANIFEST_MAX_BYTES = 16 * 1024;
/** A description is shown on one line of at most this many characters. */
export const SKILL_DESCRIPTION_MAX_CHARACTERS = 200;
/** A title is shown on one line of at most this many characters. */
export const SKILL_TITLE_MAX_CHARACTERS = 100;

export const SKILLS_MANIFEST_HEADING = '## Skills';
const INSTRUCTION = 'Before you do what a skill describes, call load_skill with its key (exactly as listed; keys are case-sensitive) to get its full instructions.';
/** Room kept for the closing line while lines are added. */
const CLOSING_LINE_RESERVE_BYTES = 160;

export interface SkillsManifestBounds {
  /** @default SKILLS_MANIFEST_MAX_ENTRIES */
  maxEntries?: number;
  /** @default SKILLS_MANIFEST_MAX_BYTES */
  maxBytes?: number;
}

/** `text` on one line (whitespace runs, line breaks included, become one space), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/** `- <key>: <title> — <description>`, leaving out what the entry lacks. */
export function skillLine(skill: SkillSummary): string {
  const title = skill.title ? oneLine(skill.title, SKILL_TITLE_MAX_CHARACTERS) : '';
  const description = skill.description ? oneLine(skill.description, SKILL_DESCRIPTION_MAX_CHARACTERS) : '';
  return `- ${skill.key}${title ? `: ${title}` : ''}${description ? ` — ${description}` : ''}`;
}

function closingLine(unlisted: number): string {
  const skills = unlisted === 1 ? 'skill is' : 'skills are';
  return `${unlisted} more ${skills} not listed here; load_skill takes any skill key, listed or not.`;
}

/**
 * The manifest text.
 * @param listed skills in the order to show (by key), at most `maxEntries` of them are used
 * @param total how many distinct skill keys the stack holds (listed or not)
 * @returns null when the stack holds no skills
 * @example
 * skillsManifest([{ key: 'refunds', title: 'Refunds', description: 'Refund an order' }], 1)
 * // "## Skills\n<instruction>\n- refunds: Refunds — Refund an order"
 */
export function skillsManifest(listed: readonly SkillSummary[], total: number, bounds: SkillsManifestBounds = {}): string | null {
  if (total <= 0 && listed.length === 0) return null;
  const maxEntries = bounds.maxEntries ?? SKILLS_MANIFEST_MAX_ENTRIES;
  const maxBytes = bounds.maxBytes ?? SKILLS_MANIFEST_MAX_BYTES;
  const lines = [SKILLS_MANIFEST_HEADING, INSTRUCTION];
  let bytes = Buffer.byteLength(lines.join('\n'));
  for (const skill of listed.slice(0, maxEntries)) {
    const line = skillLine(skill);
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size + CLOSING_LINE_RESERVE_BYTES > maxBytes) break;
    lines.push(line);
    bytes += size;
  }
  const unlisted = Math.max(total, listed.length) - (lines.length - 2);
  if (unlisted > 0) lines.push(closingLine(unlisted));
  return lines.join('\n');
}
