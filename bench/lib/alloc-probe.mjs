// Loaded into a server by bench/chat-alloc.ts (`node --import`): SIGUSR2 starts a window, the next
// SIGUSR2 ends it and writes what the heap allocated in it (bytes: the used heap's growth plus
// what every collection freed, v8.GCProfiler), the collections' time and the process's CPU to
// ALLOC_PROBE_OUT. Not loaded by the service itself.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import v8 from 'node:v8';

// ALLOC_PROBE_HEAP=<file>: also a sampling heap profile of the window, collected objects included
// (open it in Chrome's DevTools, or sum it by function: bench/lib/alloc-top.mjs).
const heapOut = process.env.ALLOC_PROBE_HEAP;
const session = heapOut ? new Session() : null;
session?.connect();
const post = (method, params) => new Promise((ok, ko) => session.post(method, params, (e, r) => (e ? ko(e) : ok(r))));

let window = null;
process.on('SIGUSR2', () => {
  if (!window) {
    const profiler = new v8.GCProfiler();
    profiler.start();
    if (session)
      void post('HeapProfiler.startSampling', {
        samplingInterval: 512,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    window = { profiler, used: v8.getHeapStatistics().used_heap_size, cpu: process.cpuUsage() };
    return;
  }
  const { profiler, used, cpu } = window;
  window = null;
  const stats = profiler.stop().statistics;
  const usedEnd = v8.getHeapStatistics().used_heap_size;
  let freed = 0;
  let gcUs = 0;
  const byType = {};
  for (const s of stats) {
    byType[s.gcType] ??= { n: 0, us: 0 };
    const t = byType[s.gcType];
    t.n++;
    t.us += s.cost;
    freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
    gcUs += s.cost;
  }
  const c = process.cpuUsage(cpu);
  const out = { allocated: usedEnd - used + freed, gcs: stats.length, gcUs, byType, cpuUs: c.user + c.system };
  if (!session) return writeFileSync(process.env.ALLOC_PROBE_OUT, JSON.stringify(out));
  void post('HeapProfiler.stopSampling').then(({ profile }) => {
    writeFileSync(heapOut, JSON.stringify(profile));
    writeFileSync(process.env.ALLOC_PROBE_OUT, JSON.stringify(out));
  });
});
