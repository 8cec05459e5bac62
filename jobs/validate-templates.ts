/**
 * Template rules (`structs.Template.Validate`) and svc's own for its secrets
 * template: a destination inside the task's folders, a known change mode, and
 * a `nomadVar` path the job's workload identity may read (`nomad/jobs/<job id>`;
 * another path renders nothing without an ACL policy, and the task never starts).
 */
import { list, oneOf, str, type Obj, type Report } from './rules.js';

const NOMAD_VAR = /nomadVar "([^"]*)"/g;

export function checkTemplates(report: Report, path: string, task: Obj, jobId: string | undefined): void {
  const destinations = new Set<string>();
  list(task.Templates).forEach((template, index) => {
    const at = `${path}.Templates[${index}]`;
    const dest = str(template.DestPath);
    const body = str(template.EmbeddedTmpl);
    if ((body === undefined || body === '') && str(template.SourcePath) === undefined)
      report(`${at}.EmbeddedTmpl`, 'a template needs EmbeddedTmpl or SourcePath');
    if (dest === undefined || dest === '') report(`${at}.DestPath`, 'is required');
    else {
      if (destinations.has(dest)) report(`${at}.DestPath`, `"${dest}" is the destination of another template`);
      destinations.add(dest);
      if (dest.startsWith('/') || dest.split('/').includes('..'))
        report(`${at}.DestPath`, `"${dest}" must stay inside the task's folders (local/, secrets/)`);
    }
    if (template.ChangeMode !== undefined) oneOf(report, `${at}.ChangeMode`, template.ChangeMode, ['noop', 'restart', 'signal', 'script']);
    if (template.ChangeMode === 'signal' && !str(template.ChangeSignal))
      report(`${at}.ChangeSignal`, 'is required with ChangeMode "signal"');
    for (const match of (body ?? '').matchAll(NOMAD_VAR)) {
      const wanted = `nomad/jobs/${jobId ?? ''}`;
      if (jobId !== undefined && match[1] !== wanted && !match[1]!.startsWith(`${wanted}/`)) {
        report(
          `${at}.EmbeddedTmpl`,
          `reads the Nomad Variable "${match[1]}", which the job's workload identity may not read; svc writes its secrets to "${wanted}"`,
        );
      }
    }
    if (template.Envvars === true && dest !== undefined && !dest.startsWith('secrets/') && (body ?? '').includes('nomadVar')) {
      report(`${at}.DestPath`, `secret values belong in the task's private secrets/ folder, not "${dest}"`);
    }
  });
}
