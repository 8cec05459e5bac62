/**
 * How Nomad's HTTP API encodes an allocation (hashicorp/nomad
 * nomad/structs/alloc.go, structs.go; go-msgpack's JSON handle): the full
 * `Allocation` carries `_struct bool codec:",omitempty"`, so every empty
 * field is left out; the list's `AllocListStub` has every field but
 * `AllocatedResources` (`json:",omitempty"`, only with `?resources=true`);
 * ports (`AllocatedPortMapping`, `Port`) and networks (`NetworkResource`)
 * leave out their empty fields too. The stand-in keeps one internal object
 * per allocation; these are its views. Nomad 1.11.3 answered so (test/fixtures/agents/nomad.json).
 */
import type { Json } from './job.js';

/** The ID of the keyring key that signed an allocation's identities (`SigningKeyID`); one per stand-in. */
const SIGNING_KEY_ID = 'a4c2e0f1-7b3d-4e5f-9a61-2c8d0b1e3f57';

/** go-msgpack's `isEmptyValue`: "", 0, false, nil, an empty map or slice, a struct whose fields are all nil. */
function empty(value: unknown): boolean {
  if (value === '' || value === 0 || value === false || value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value).every((v) => v === null);
  return false;
}

export function omitEmpty(value: Json): Json {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => !empty(v)));
}

const DESIRED_TRANSITION = { Migrate: null, Reschedule: null, ForceReschedule: null, NoShutdownDelay: null, MigrateDisablePlacement: null };

function taskStates(alloc: Json): Json {
  return Object.keys(alloc.TaskStates ?? {}).length === 0 ? null : alloc.TaskStates;
}

/** `AllocListStub` (`GET /v1/job/:id/allocations`, `/v1/allocations`). */
export function allocStub(alloc: Json): Json {
  return {
    ID: alloc.ID,
    EvalID: alloc.EvalID,
    Name: alloc.Name,
    Namespace: alloc.Namespace,
    NodeID: alloc.NodeID,
    NodeName: alloc.NodeName,
    JobID: alloc.JobID,
    JobType: alloc.JobType,
    JobVersion: alloc.JobVersion,
    TaskGroup: alloc.TaskGroup,
    DesiredStatus: alloc.DesiredStatus,
    DesiredDescription: alloc.DesiredDescription,
    ClientStatus: alloc.ClientStatus,
    ClientDescription: alloc.ClientDescription,
    DesiredTransition: { ...DESIRED_TRANSITION, ...alloc.DesiredTransition },
    TaskStates: taskStates(alloc),
    DeploymentStatus: alloc.DeploymentStatus,
    FollowupEvalID: alloc.FollowupEvalID,
    NextAllocation: alloc.NextAllocation,
    RescheduleTracker: alloc.RescheduleTracker,
    PreemptedAllocations: alloc.PreemptedAllocations,
    PreemptedByAllocation: alloc.PreemptedByAllocation,
    CreateIndex: alloc.CreateIndex,
    ModifyIndex: alloc.ModifyIndex,
    CreateTime: alloc.CreateTime,
    ModifyTime: alloc.ModifyTime,
  };
}

/** The deprecated `Resources` of a task or of the allocation (still filled by the scheduler). */
function resources(cpu: number, memoryMB: number, memoryMaxMB: number, diskMB: number, networks: Json): Json {
  return {
    CPU: cpu,
    Cores: 0,
    MemoryMB: memoryMB,
    MemoryMaxMB: memoryMaxMB,
    DiskMB: diskMB,
    IOPS: 0,
    Networks: networks,
    Devices: null,
    NUMA: null,
    SecretsMB: 0,
  };
}

/** `Allocation` (`GET /v1/allocation/:id`). */
export function allocation(alloc: Json): Json {
  const allocated = alloc.AllocatedResources;
  const tasks: Json[] = alloc.Job?.TaskGroups?.find((g: Json) => g.Name === alloc.TaskGroup)?.Tasks ?? [];
  const networks = allocated.Shared.Networks.map((n: Json) =>
    omitEmpty({
      ...n,
      DynamicPorts: (n.DynamicPorts ?? []).map(omitEmpty),
      ReservedPorts: (n.ReservedPorts ?? []).map(omitEmpty),
    }),
  );
  const taskResources = Object.fromEntries(
    tasks.map((t) => [t.Name, resources(t.Resources.CPU, t.Resources.MemoryMB, t.Resources.MemoryMaxMB, 0, null)]),
  );
  const sum = (pick: (t: Json) => number) => tasks.reduce((total, t) => total + pick(t), 0);
  return omitEmpty({
    ID: alloc.ID,
    Namespace: alloc.Namespace,
    EvalID: alloc.EvalID,
    Name: alloc.Name,
    NodeID: alloc.NodeID,
    NodeName: alloc.NodeName,
    JobID: alloc.JobID,
    Job: alloc.Job,
    TaskGroup: alloc.TaskGroup,
    Resources: resources(
      sum((t) => t.Resources.CPU),
      sum((t) => t.Resources.MemoryMB),
      sum((t) => Math.max(t.Resources.MemoryMB, t.Resources.MemoryMaxMB)),
      allocated.Shared.DiskMB,
      networks,
    ),
    SharedResources: resources(0, 0, 0, allocated.Shared.DiskMB, networks),
    TaskResources: taskResources,
    AllocatedResources: {
      Tasks: allocated.Tasks,
      TaskLifecycles: Object.fromEntries(tasks.map((t) => [t.Name, t.Lifecycle ?? null])),
      Shared: { DiskMB: allocated.Shared.DiskMB, Networks: networks, Ports: allocated.Shared.Ports.map(omitEmpty) },
    },
    Metrics: {
      NodesEvaluated: 1,
      NodesFiltered: 0,
      NodesInPool: 1,
      NodesAvailable: { [alloc.Job?.Datacenters?.[0] ?? 'dc1']: 1 },
      ClassFiltered: null,
      ConstraintFiltered: null,
      NodesExhausted: 0,
      ClassExhausted: null,
      DimensionExhausted: null,
      QuotaExhausted: null,
      ResourcesExhausted: null,
      ScoreMetaData: null,
      AllocationTime: 0,
      CoalescedFailures: 0,
      NodePool: alloc.Job?.NodePool ?? 'default',
      Scores: null,
    },
    DesiredStatus: alloc.DesiredStatus,
    DesiredDescription: alloc.DesiredDescription,
    DesiredTransition: alloc.DesiredTransition,
    ClientStatus: alloc.ClientStatus,
    ClientDescription: alloc.ClientDescription,
    TaskStates: taskStates(alloc),
    AllocStates: null,
    PreviousAllocation: alloc.PreviousAllocation,
    NextAllocation: alloc.NextAllocation,
    DeploymentID: alloc.DeploymentID,
    DeploymentStatus: alloc.DeploymentStatus,
    RescheduleTracker: alloc.RescheduleTracker,
    NetworkStatus: alloc.NetworkStatus ?? null,
    FollowupEvalID: alloc.FollowupEvalID,
    PreemptedAllocations: alloc.PreemptedAllocations,
    PreemptedByAllocation: alloc.PreemptedByAllocation,
    SigningKeyID: SIGNING_KEY_ID,
    CreateIndex: alloc.CreateIndex,
    ModifyIndex: alloc.ModifyIndex,
    AllocModifyIndex: alloc.AllocModifyIndex,
    CreateTime: alloc.CreateTime,
    ModifyTime: alloc.ModifyTime,
  });
}

/** `Evaluation` (`GET /v1/evaluation/:id`): `_struct` omitempty too, with the plan's annotations once it ran. */
export function evaluation(e: Json): Json {
  return omitEmpty({ ...e, PlanAnnotations: e.PlanAnnotations ?? null });
}
