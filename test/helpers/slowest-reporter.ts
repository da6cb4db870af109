// A vitest reporter that ends every run with its 20 slowest files: the time each took from its
// import to its last hook (setup file, import, tests and hooks), and how much of it was import.
// Named in vitest.config.ts beside the default reporter, and by .ci/run beside the JSON one.
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 20;

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => {
        const d = m.diagnostic();
        const importing = d.setupDuration + d.collectDuration;
        return { file: m.relativeModuleId, project: m.project.name, total: importing + d.duration, importing };
      })
      .sort((a, b) => b.total - a.total)
      .slice(0, SHOWN);
    if (rows.length === 0) return;
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const lines = rows.map((r) => `  ${s(r.total).padStart(8)}  (import ${s(r.importing)})  ${r.project.padEnd(8)} ${r.file}`);
    process.stdout.write(`\nThe ${rows.length} slowest files:\n${lines.join('\n')}\n`);
  }
}
