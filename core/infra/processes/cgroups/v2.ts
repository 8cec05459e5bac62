/**
 * cgroup v2: one unified hierarchy. A folder's children get a controller
 * only when the folder lists it in `cgroup.subtree_control`; CPU is
 * `cpu.max` ("quota period"), memory `memory.max` with no swap.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readCounter } from './counters.js';
import { cpuQuotaMicros, CPU_PERIOD_MICROS, memoryBytes, type CgroupFiles } from './types.js';

export const V2_CONTROLLERS = ['cpu', 'memory'] as const;

export const v2Files: CgroupFiles = {
  version: 2,
  delegate(dir) {
    const file = path.join(dir, 'cgroup.subtree_control');
    const enabled = readFileSync(file, 'utf8').trim().split(/\s+/);
    const missing = V2_CONTROLLERS.filter((controller) => !enabled.includes(controller));
    if (missing.length > 0) writeFileSync(file, missing.map((controller) => `+${controller}`).join(' '));
  },
  limit(dirs, limits) {
    writeFileSync(path.join(dirs.cpu, 'cpu.max'), `${cpuQuotaMicros(limits.cpu)} ${CPU_PERIOD_MICROS}`);
    writeFileSync(path.join(dirs.memory, 'memory.max'), String(memoryBytes(limits.memoryMiB)));
    const swap = path.join(dirs.memory, 'memory.swap.max');
    if (existsSync(swap)) writeFileSync(swap, '0');
  },
  memoryKills(dirs) {
    return readCounter(path.join(dirs.memory, 'memory.events'), 'oom_kill') ?? 0;
  },
  cpuUsageMicros(dirs) {
    return readCounter(path.join(dirs.cpu, 'cpu.stat'), 'usage_usec');
  },
  memoryBytesNow(dirs) {
    return Number(readFileSync(path.join(dirs.memory, 'memory.current'), 'utf8').trim());
  },
};
