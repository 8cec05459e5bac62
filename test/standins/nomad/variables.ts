/**
 * Nomad Variables as the stand-in keeps them (`/v1/var/:path`, hashicorp/nomad
 * command/agent/variable_endpoint.go and nomad/variables_endpoint.go): a PUT
 * needs Items (400 `variable missing required Items object`) and answers the
 * variable with its Items (the writer may read its own write) and
 * `X-Nomad-Index`; a GET of an unknown path is 404 `variable not found`; a
 * DELETE answers 204 with no body, known path or not. The namespace is the
 * body's, else the request's. No locks, no CAS.
 *
 * And the one kind of template the stand-in renders (svc's own,
 * jobs/secrets-template.ts): every item of a `nomadVar` as `K=<JSON string>`,
 * read back into the task's environment as Nomad's go-envparse reads JSON
 * strings. Any other template fails the task: nothing is ignored silently.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

type Json = any;

export interface StoredVariable {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  CreateTime: number;
  ModifyIndex: number;
  ModifyTime: number;
  Items: Record<string, string>;
}

export class Variables {
  /** `<namespace>\0<path>` → variable */
  readonly #all = new Map<string, StoredVariable>();

  get(namespace: string, varPath: string): StoredVariable | undefined {
    return this.#all.get(`${namespace}\0${varPath}`);
  }

  put(namespace: string, varPath: string, items: Record<string, string>, index: number): StoredVariable {
    const now = Date.now() * 1_000_000;
    const before = this.get(namespace, varPath);
    const stored: StoredVariable = {
      Namespace: namespace,
      Path: varPath,
      CreateIndex: before?.CreateIndex ?? index,
      CreateTime: before?.CreateTime ?? now,
      ModifyIndex: index,
      ModifyTime: now,
      Items: { ...items },
    };
    this.#all.set(`${namespace}\0${varPath}`, stored);
    return stored;
  }

  delete(namespace: string, varPath: string): void {
    this.#all.delete(`${namespace}\0${varPath}`);
  }
}

/** svc's secrets template: `{{ with nomadVar "P" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}\n{{ end }}{{ end }}`. */
const SECRETS_TEMPLATE =
  /^\{\{ with nomadVar "([^"]+)" \}\}\{\{ range \.Tuples \}\}\{\{ \.K \}\}=\{\{ \.V \| toJSON \}\}\n\{\{ end \}\}\{\{ end \}\}$/;

/**
 * Who a task's template reads as: its workload identity's claims. A periodic (or dispatched) child's
 * `job` is its parent's ID: Nomad's `Job.GetIDforWorkloadIdentity` (nomad/structs/structs.go).
 */
export interface WorkloadIdentity {
  readonly namespace: string;
  readonly job: string;
  readonly group: string;
  readonly task: string;
}

/** The Variables a workload identity reads with no ACL policy (acl/acl.go `matchingVariablesCapabilitySet`). */
function identityMayRead(identity: WorkloadIdentity, variablePath: string): boolean {
  const { job, group, task } = identity;
  return ['nomad/jobs', `nomad/jobs/${job}`, `nomad/jobs/${job}/${group}`, `nomad/jobs/${job}/${group}/${task}`].includes(variablePath);
}

/**
 * Renders the task's templates into its directory and returns the variables of those with
 * `Envvars`; throws (the task fails) for a template it cannot render or a Variable that is missing
 * (Nomad would wait for it: svc always writes it first).
 */
export function renderTemplates(task: Json, taskDir: string, identity: WorkloadIdentity, variables: Variables): Record<string, string> {
  const { namespace } = identity;
  const env: Record<string, string> = {};
  for (const template of (task.Templates ?? []) as Json[]) {
    const match = SECRETS_TEMPLATE.exec(String(template.EmbeddedTmpl ?? ''));
    if (match === null)
      throw new Error(`Template failed: the stand-in renders only svc's secrets template, not ${JSON.stringify(template.EmbeddedTmpl)}`);
    if (!identityMayRead(identity, match[1]!))
      throw new Error(
        `Template failed: nomad.var.block(${match[1]}@${namespace}.global): Unexpected response code: 403 (Permission denied)`,
      );
    const variable = variables.get(namespace, match[1]!);
    if (variable === undefined) throw new Error(`Template failed: nomad.var.block(${match[1]}@${namespace}.global): variable not found`);
    const text = Object.entries(variable.Items)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}\n`)
      .join('');
    const dest = path.join(taskDir, String(template.DestPath));
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(dest, text, { mode: Number.parseInt(String(template.Perms ?? '0644'), 8) });
    if (template.Envvars === true) Object.assign(env, variable.Items);
  }
  return env;
}
