/**
 * The plan endpoint's Diff (structs.JobDiff: Type Added|Deleted|Edited|None, Fields of
 * {Type, Name, Old, New, Annotations}, Objects, TaskGroups with Tasks and Updates) and
 * Annotations.DesiredTGUpdates. The diff follows Nomad's shape with values as strings; nested
 * structs become Objects, primitive lists and maps become Fields named like `Datacenters` / `Meta[k]`.
 */
import { destructiveChange, type Json } from './job.js';

type DiffType = 'Added' | 'Deleted' | 'Edited' | 'None';

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fieldsAndObjects(a: Json, b: Json, skip: readonly string[] = []): { Fields: Json[] | null; Objects: Json[] | null } {
  const fields: Json[] = [];
  const objects: Json[] = [];
  const keys = [...new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])].filter((k) => !skip.includes(k)).sort();
  for (const key of keys) {
    const x = a?.[key];
    const y = b?.[key];
    if (isObject(x) || isObject(y)) {
      const isMap = key === 'Meta' || key === 'Env' || key === 'Config' || key === 'GetterOptions';
      if (isMap) {
        for (const k of [...new Set([...Object.keys(x ?? {}), ...Object.keys(y ?? {})])].sort()) {
          const f = field(`${key}[${k}]`, (x as Json)?.[k], (y as Json)?.[k]);
          if (f.Type !== 'None') fields.push(f);
        }
        continue;
      }
      const inner = fieldsAndObjects(x, y);
      const type: DiffType = x === undefined ? 'Added' : y === undefined ? 'Deleted' : inner.Fields || inner.Objects ? 'Edited' : 'None';
      if (type !== 'None') objects.push({ Type: type, Name: key, ...inner });
    } else if (Array.isArray(x) || Array.isArray(y)) {
      const xs: unknown[] = (x as unknown[]) ?? [];
      const ys: unknown[] = (y as unknown[]) ?? [];
      if (xs.every((v) => !isObject(v)) && ys.every((v) => !isObject(v))) {
        for (const v of xs)
          if (!ys.some((w) => text(w) === text(v))) fields.push({ Type: 'Deleted', Name: key, Old: text(v), New: '', Annotations: null });
        for (const v of ys)
          if (!xs.some((w) => text(w) === text(v))) fields.push({ Type: 'Added', Name: key, Old: '', New: text(v), Annotations: null });
      } else {
        for (let i = 0; i < Math.max(xs.length, ys.length); i += 1) {
          const inner = fieldsAndObjects(xs[i], ys[i]);
          const type: DiffType =
            xs[i] === undefined ? 'Added' : ys[i] === undefined ? 'Deleted' : inner.Fields || inner.Objects ? 'Edited' : 'None';
          if (type !== 'None') objects.push({ Type: type, Name: key, ...inner });
        }
      }
    } else {
      const f = field(key, x, y);
      if (f.Type !== 'None') fields.push(f);
    }
  }
  return { Fields: fields.length ? fields : null, Objects: objects.length ? objects : null };
}

function field(name: string, old: unknown, now: unknown): Json {
  const type: DiffType = old === undefined ? 'Added' : now === undefined ? 'Deleted' : text(old) === text(now) ? 'None' : 'Edited';
  return { Type: type, Name: name, Old: text(old), New: text(now), Annotations: null };
}

export function diffJobs(old: Json | null, now: Json): Json {
  const top = fieldsAndObjects(old ?? {}, now, ['TaskGroups']);
  const groups: Json[] = [];
  const names = [...new Set([...(old?.TaskGroups ?? []), ...now.TaskGroups].map((g: Json) => g.Name))];
  for (const name of names) {
    const a = old?.TaskGroups.find((g: Json) => g.Name === name);
    const b = now.TaskGroups.find((g: Json) => g.Name === name);
    const inner = fieldsAndObjects(a ?? {}, b ?? {}, ['Tasks']);
    const tasks: Json[] = [];
    const taskNames = [...new Set([...(a?.Tasks ?? []), ...(b?.Tasks ?? [])].map((t: Json) => t.Name))];
    for (const taskName of taskNames) {
      const x = a?.Tasks.find((t: Json) => t.Name === taskName);
      const y = b?.Tasks.find((t: Json) => t.Name === taskName);
      const d = fieldsAndObjects(x ?? {}, y ?? {});
      const type: DiffType = !x ? 'Added' : !y ? 'Deleted' : d.Fields || d.Objects ? 'Edited' : 'None';
      tasks.push({ Type: type, Name: taskName, ...d, Annotations: type === 'Edited' ? ['forces create/destroy update'] : null });
    }
    const type: DiffType = !a
      ? 'Added'
      : !b
        ? 'Deleted'
        : inner.Fields || inner.Objects || tasks.some((t) => t.Type !== 'None')
          ? 'Edited'
          : 'None';
    groups.push({ Type: type, Name: name, ...inner, Tasks: tasks, Updates: null });
  }
  const type: DiffType = !old ? 'Added' : top.Fields || top.Objects || groups.some((g) => g.Type !== 'None') ? 'Edited' : 'None';
  return { Type: type, ID: now.ID, ...top, TaskGroups: groups };
}

/** What the scheduler would do per group: Place, Stop, Ignore, InPlaceUpdate, DestructiveUpdate. */
export function planAnnotations(old: Json | null, now: Json, live: readonly Json[]): Json {
  const out: Json = {};
  for (const group of now.TaskGroups) {
    const previous = old?.TaskGroups.find((g: Json) => g.Name === group.Name);
    const running = live.filter((a) => a.TaskGroup === group.Name).length;
    const count = now.Stop ? 0 : group.Count;
    const keep = Math.min(running, count);
    const destructive = previous ? destructiveChange(previous, group) : false;
    const specChanged = previous ? JSON.stringify(previous) !== JSON.stringify(group) : false;
    out[group.Name] = {
      Ignore: destructive || specChanged ? 0 : keep,
      Place: Math.max(count - running, 0),
      Migrate: 0,
      Stop: Math.max(running - count, 0),
      InPlaceUpdate: !destructive && specChanged ? keep : 0,
      DestructiveUpdate: destructive ? keep : 0,
      Canary: 0,
      Preemptions: 0,
      Reconnect: 0,
      Disconnect: 0,
      RescheduleNow: 0,
      RescheduleLater: 0,
    };
  }
  for (const group of old?.TaskGroups ?? []) {
    if (!now.TaskGroups.some((g: Json) => g.Name === group.Name)) {
      out[group.Name] = {
        Ignore: 0,
        Place: 0,
        Migrate: 0,
        Stop: live.filter((a) => a.TaskGroup === group.Name).length,
        InPlaceUpdate: 0,
        DestructiveUpdate: 0,
        Canary: 0,
        Preemptions: 0,
        Reconnect: 0,
        Disconnect: 0,
        RescheduleNow: 0,
        RescheduleLater: 0,
      };
    }
  }
  return out;
}
