/**
 * CLI basics a new user tries first (issue #23 item 12): `podsim --version` said "unknown option"
 * (exit 2), `podsim help` printed the help but exited 2, and `--faults` of explore / replay said
 * its default twice (`(default 1) (default: 1)`).
 */
import test from 'ava';
import { main } from '../src/cli.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

for (const flag of ['--version', '-V']) {
  test(`podsim ${flag} prints the podsim version and the Kubernetes version it simulates, exit 0`, async (t) => {
    const r = await cli([flag]);
    t.is(r.code, 0, r.err);
    t.regex(r.out, /^podsim \d+\.\d+\.\d+ \(simulates Kubernetes v1\.22\.8\)$/);
  });
}

for (const args of [['help'], ['help', 'run'], ['--help'], ['run', '--help']]) {
  test(`podsim ${args.join(' ')} prints the help and exits 0`, async (t) => {
    const r = await cli(args);
    t.is(r.code, 0, r.err);
    t.regex(r.out, /Usage: podsim/);
  });
}

test('no option in any --help states its default twice ("(default 1) (default: 1)")', async (t) => {
  const commands = [[], ['run'], ['validate'], ['serve'], ['explore'], ['replay'], ['bench'], ['bench', 'storm'], ['bench', 'churn'], ['bench', 'scale']];
  let options = 0;
  for (const c of commands) {
    const r = await cli([...c, '--help']);
    t.is(r.code, 0, `${c.join(' ')}: ${r.err}`);
    // An option's description may wrap: join each option's lines before counting.
    const entries = r.out.split('\n').reduce<string[]>((acc, l) => (/^ {2}-/.test(l) ? [...acc, l] : /^ {4,}\S/.test(l) && acc.length ? [...acc.slice(0, -1), `${acc[acc.length - 1]} ${l.trim()}`] : acc), []);
    for (const e of entries) {
      options++;
      t.true((e.match(/\(default/g) ?? []).length <= 1, `${c.join(' ')}: ${e}`);
    }
  }
  t.true(options > 30, `read ${options} options`);
});

test('no --help prints a default as a JSON array ("(default: [1000,10000,…])"); bench scale shows its sizes as the flag takes them', async (t) => {
  const commands = [[], ['run'], ['validate'], ['serve'], ['explore'], ['replay'], ['bench'], ['bench', 'storm'], ['bench', 'churn'], ['bench', 'scale']];
  for (const c of commands) {
    const r = await cli([...c, '--help']);
    t.notRegex(r.out.replace(/\s+/g, ' '), /\(default: \[/, c.join(' '));
  }
  const scale = (await cli(['bench', 'scale', '--help'])).out.replace(/\s+/g, ' ');
  t.regex(scale, /\(default: 1k,10k,100k,150k\)/);
});

test('bug: serve --warp 100000h was silent for hours (every virtual second is simulated) — now exit 2 above a year, saying why', async (t) => {
  const r = await cli(['serve', '--warp', '100000h']);
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, /--warp.*expected at most 8760h \(a year\)/);
  t.notRegex(r.out, /listening on/);
});
