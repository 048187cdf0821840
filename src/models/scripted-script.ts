// The script language of builtin/scripted (api-decisions.md "Models"): one
// instruction per line, grouped into the model turns that perform them.
// Pure text in, turns out; running them is scripted-model.ts's job.

/** One thing a turn does after its sleeps. */
export type ScriptAction =
  | { kind: 'SAY'; text: string }
  | { kind: 'CALLS'; calls: Array<{ toolName: string; arguments: string }> }
  | { kind: 'OUTPUT'; json: string }
  | { kind: 'FAIL'; message: string }
  | { kind: 'INVALID'; line: number; problem: string };

/** One model turn of a script: wait `sleepMs`, then act (null: nothing left, the fallback answers). */
export interface ScriptTurn {
  sleepMs: number;
  action: ScriptAction | null;
}

/** A turn with the script's lines it performs (its SLEEPs, then its action's lines), as written. */
interface ScriptTurnLines {
  turn: ScriptTurn;
  lines: string[];
}

type Instruction =
  | { kind: 'SLEEP'; ms: number }
  | { kind: 'CALL'; toolName: string; arguments: string }
  | Exclude<ScriptAction, { kind: 'CALLS' }>;

// Upper case and a space (or the line's end) after the keyword, so ordinary
// prose ("Say hello", "CALLING home") is never read as an instruction.
const DIRECTIVE = /^(SAY|CALL|OUTPUT|SLEEP|FAIL)(?:\s+([\s\S]*))?$/;

/** Arguments of a CALL or OUTPUT without any: an empty object. */
const NO_ARGUMENTS = '{}';

function parseLine(text: string, line: number): Instruction | null {
  const match = DIRECTIVE.exec(text.trim());
  if (!match) return null;
  const rest = (match[2] ?? '').trim();
  switch (match[1]) {
    case 'SAY':
      return { kind: 'SAY', text: rest };
    case 'CALL': {
      if (!rest) return { kind: 'INVALID', line, problem: 'CALL needs a tool name: CALL <toolName> <json arguments>' };
      const space = rest.search(/\s/);
      const toolName = space < 0 ? rest : rest.slice(0, space);
      const args = space < 0 ? '' : rest.slice(space).trim();
      // The arguments go to the objective as written, invalid JSON included, as a real model's would.
      return { kind: 'CALL', toolName, arguments: args || NO_ARGUMENTS };
    }
    case 'OUTPUT':
      return { kind: 'OUTPUT', json: rest || NO_ARGUMENTS };
    case 'SLEEP':
      return /^\d+$/.test(rest) ? { kind: 'SLEEP', ms: Number(rest) } : { kind: 'INVALID', line, problem: 'SLEEP needs a whole number of milliseconds: SLEEP <ms>' };
    default:
      return { kind: 'FAIL', message: rest };
  }
}

/** The script's instructions in order, each with its line; lines that are not instructions (blank, prose) are skipped. */
function instructionsOf(script: string): Array<{ instruction: Instruction; text: string }> {
  return script.split(/\r\n|\r|\n/).flatMap((text, index) => {
    const instruction = parseLine(text, index + 1);
    return instruction ? [{ instruction, text: text.trim() }] : [];
  });
}

/**
 * The model turns a script takes: each turn sleeps through the SLEEP lines
 * before its action, then performs one SAY, one run of consecutive CALL
 * lines (parallel calls), one OUTPUT or one FAIL. Sleeps after the last
 * action make a last turn without one.
 */
export function scriptTurns(script: string): ScriptTurn[] {
  return turnsWithLines(script).map(({ turn }) => turn);
}

function turnsWithLines(script: string): ScriptTurnLines[] {
  const turns: ScriptTurnLines[] = [];
  let sleepMs = 0;
  let lines: string[] = [];
  let calls: Array<{ toolName: string; arguments: string }> = [];
  const close = (action: ScriptAction | null) => {
    turns.push({ turn: { sleepMs, action }, lines });
    sleepMs = 0;
    lines = [];
  };
  const closeCalls = () => {
    if (calls.length) close({ kind: 'CALLS', calls });
    calls = [];
  };
  for (const { instruction, text } of instructionsOf(script)) {
    if (instruction.kind === 'CALL') {
      calls.push({ toolName: instruction.toolName, arguments: instruction.arguments });
      lines.push(text);
      continue;
    }
    closeCalls();
    lines.push(text);
    if (instruction.kind === 'SLEEP') sleepMs += instruction.ms;
    else close(instruction);
  }
  closeCalls();
  if (sleepMs > 0) close(null);
  return turns;
}

/**
 * The script of the turns from `performed` on, one instruction per line: a
 * script that performs exactly what this one had left (its turns group the
 * same way). Empty when nothing is left.
 */
export function scriptRemainder(script: string, performed: number): string {
  return turnsWithLines(script).slice(performed).flatMap(({ lines }) => lines).join('\n');
}
