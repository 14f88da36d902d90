/**
 * `podsim bench` flags that used to run a meaningless bench: `--network-us 100000000` (100 s one
 * way) made the bench driver's own watch time out, so the run ended as an engine failure
 * ("ActorThrew … ApiWatch timed out") with no pod created. Now a flag error, exit 2.
 */
import test from 'ava';
import { main } from '../../src/cli.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

for (const sub of ['storm', 'churn']) {
  test(`bench ${sub} --network-us 100000000 is a flag error (exit 2), not an engine failure`, async (t) => {
    const r = await cli(['bench', sub, '--nodes', '3', '--network-us', '100000000', '--json']);
    t.is(r.code, 2, r.out + r.err);
    t.regex(r.err, /--network-us: expected an integer from 1 to 1000000/);
    t.is(r.out, '', 'nothing ran');
  });
}
