/**
 * What a simulated exec does with the `cmd` of a CRI `ExecSync` (cri-api v1alpha2
 * `ExecSyncRequest.cmd`; the kubelet sends an exec preStop hook or exec probe through it,
 * `pkg/kubelet/lifecycle/handlers.go` / `pkg/kubelet/prober/prober.go`). `sleep N` takes N
 * seconds (GNU coreutils `sleep` syntax, also inside `sh -c "…"`), `sleep infinity` never ends,
 * `true`/`false`/`exit N` are instant; every other command takes a configurable duration and exits
 * with a configurable code. Simplification: a script's commands run one after another whatever
 * joins them (`;`, `&&`, `||`, `|`, `&`), the exit code is the last command's, and control flow
 * (`if`, `while`, `for`) is not interpreted: each of its words that leads a command counts as one.
 */
import { type DurationUs, NEVER, US_PER_SECOND } from '@podsim/api';

/** How one exec runs: its duration (NEVER = never ends on its own), exit code and stderr. */
export interface ExecPlan {
  readonly durationUs: DurationUs;
  readonly exitCode: number;
  readonly stderr: string;
}

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'zsh', 'ksh', 'mksh']);
const SLEEP_ARG = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/;
const SLEEP_UNIT_S: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };

const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/**
 * Plans `cmd`. `otherUs()` draws the duration of one command that is not sleep/true/false/exit
 * (called once per such command, in order); `otherExitCode` is its exit code.
 */
export function planExec(cmd: readonly string[], otherUs: () => DurationUs, otherExitCode: number): ExecPlan {
  if (cmd.length === 0) return { durationUs: 0, exitCode: 126, stderr: 'exec: no command' };
  const script = shellScript(cmd);
  const commands = script === undefined ? [[...cmd]] : splitScript(script);
  let durationUs = 0;
  let exitCode = 0;
  let stderr = '';
  for (const words of commands) {
    const w = words[0] === 'exec' ? words.slice(1) : words;
    if (w.length === 0) continue;
    const name = basename(w[0]);
    if (name === 'sleep') {
      const s = sleepUs(w.slice(1));
      if (typeof s === 'string') {
        exitCode = 1;
        stderr = s;
        continue;
      }
      if (s === NEVER) return { durationUs: NEVER, exitCode: 0, stderr };
      durationUs += s;
      exitCode = 0;
    } else if (name === 'true' || name === ':') {
      exitCode = 0;
    } else if (name === 'false') {
      exitCode = 1;
    } else if (name === 'exit' && script !== undefined) {
      const n = Number(w[1] ?? exitCode);
      return { durationUs, exitCode: Number.isInteger(n) ? n & 0xff : 2, stderr };
    } else {
      durationUs += otherUs();
      exitCode = otherExitCode;
    }
  }
  return { durationUs, exitCode, stderr };
}

/** The script of `sh -c "<script>"` (any listed shell, any path, flags such as `-ec`), else undefined. */
function shellScript(cmd: readonly string[]): string | undefined {
  if (!SHELLS.has(basename(cmd[0]))) return undefined;
  for (let i = 1; i < cmd.length; i++) {
    const a = cmd[i];
    if (!a.startsWith('-') || a.startsWith('--')) return undefined;
    if (a.includes('c')) return cmd[i + 1] ?? '';
  }
  return undefined;
}

/** Splits a shell script into commands (lists of words), honouring single and double quotes. */
export function splitScript(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote = '';
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const ch = script[i];
    if (quote) {
      if (ch === quote) quote = '';
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < script.length) {
      word += script[++i];
      inWord = true;
    } else if (ch === ';' || ch === '\n' || ch === '&' || ch === '|') {
      endCommand();
    } else if (ch === ' ' || ch === '\t') {
      endWord();
    } else {
      word += ch;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

/** `sleep` operands (summed, as GNU sleep does) → µs, NEVER for `infinity`, or an error message. */
function sleepUs(args: readonly string[]): DurationUs | string {
  if (args.length === 0) return 'sleep: missing operand';
  let total = 0;
  for (const a of args) {
    if (a === 'infinity' || a === 'inf') return NEVER;
    const m = SLEEP_ARG.exec(a);
    if (!m) return `sleep: invalid time interval '${a}'`;
    total += Number(m[1]) * SLEEP_UNIT_S[m[2]] * US_PER_SECOND;
  }
  return Math.round(total);
}
