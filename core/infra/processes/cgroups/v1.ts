/**
 * cgroup v1: a hierarchy per controller (`cpu`, `cpuacct`, `memory`, or
 * `cpu,cpuacct` together). CPU is a CFS quota per period, memory a limit in
 * bytes that swap cannot dodge (`memsw` when the kernel accounts swap).
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readCounter, readNumber } from './counters.js';
import { cpuQuotaMicros, CPU_PERIOD_MICROS, memoryBytes, type CgroupFiles } from './types.js';

export const v1Files: CgroupFiles = {
  version: 1,
  delegate() {
    // v1 hierarchies need nothing: every child has the hierarchy's controllers.
  },
  limit(dirs, limits) {
    writeFileSync(path.join(dirs.cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_MICROS));
    writeFileSync(path.join(dirs.cpu, 'cpu.cfs_quota_us'), String(cpuQuotaMicros(limits.cpu)));
    const bytes = String(memoryBytes(limits.memoryMiB));
    // memory first: memsw (memory + swap) may never be below it.
    writeFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), bytes);
    const memsw = path.join(dirs.memory, 'memory.memsw.limit_in_bytes');
    if (existsSync(memsw)) writeFileSync(memsw, bytes);
  },
  memoryKills(dirs) {
    // `oom_kill` since Linux 4.13. Before it nothing counts kills (`failcnt` counts every time the
    // limit was reached, which reclaim usually survives), so no crash is blamed on memory there.
    return readCounter(path.join(dirs.memory, 'memory.oom_control'), 'oom_kill') ?? 0;
  },
  cpuUsageMicros(dirs) {
    return dirs.cpuacct === null ? null : readNumber(path.join(dirs.cpuacct, 'cpuacct.usage')) / 1000;
  },
  memoryBytesNow(dirs) {
    return readNumber(path.join(dirs.memory, 'memory.usage_in_bytes'));
  },
};
