// NATS subject patterns, the one rule the embedded event log follows to pick
// a message's stream and a consumer's messages: dot-separated tokens, `*`
// matches exactly one token, `>` (last token only) one token or more. The
// same rule as a regular expression lets Postgres filter rows (`subject ~`).

/** True when `subject` (no wildcards) matches `pattern`. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const patternTokens = pattern.split('.');
  const tokens = subject.split('.');
  for (let i = 0; i < patternTokens.length; i++) {
    if (patternTokens[i] === '>') return tokens.length > i;
    if (i >= tokens.length) return false;
    if (patternTokens[i] !== '*' && patternTokens[i] !== tokens[i]) return false;
  }
  return tokens.length === patternTokens.length;
}

/** True for a well-formed pattern: no empty token, no whitespace, wildcards whole tokens, `>` last. */
export function isValidSubjectPattern(pattern: string): boolean {
  const tokens = pattern.split('.');
  return tokens.every(
    (token, index) =>
      token.length > 0 &&
      !/\s/.test(token) &&
      (token === '*' || token === '>' || !/[*>]/.test(token)) &&
      (token !== '>' || index === tokens.length - 1),
  );
}

const REGEX_SPECIAL = /[\\^$.|?*+()[\]{}]/g;

/**
 * The pattern as an anchored regular expression with the same meaning as
 * subjectMatches, valid both in JavaScript and in Postgres (`subject ~ $1`).
 */
export function subjectPatternRegex(pattern: string): string {
  const parts = pattern.split('.').map((token) => (token === '*' ? '[^.]+' : token === '>' ? '.+' : token.replace(REGEX_SPECIAL, '\\$&')));
  return `^${parts.join('\\.')}$`;
}
