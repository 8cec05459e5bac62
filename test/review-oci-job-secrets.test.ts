/**
 * Review finding on jobs/svc-server.ts: the push password reaches svc through
 * Nomad's template `Envvars: true`, which Nomad parses with hashicorp/go-envparse.
 * There an unquoted value ends at `#`, `"` or `'` (README, "Format"), so a
 * password such as `s3cr#t` arrives as `s3cr` (and one with a lone quote fails
 * the template). go-envparse's own advice for templated values: `{{ … | toJSON }}`,
 * a double-quoted JSON string it unescapes exactly.
 */
import assert from 'node:assert/strict';
import { svcServerJob } from '../jobs/svc-server.js';

describe('review: the svc job hands the registry password over intact', () => {
  it('P1 secrets: SVC_IMAGE_REGISTRY_PASSWORD is rendered quoted (toJSON), so # and quotes in a password survive Nomad\'s env parsing', () => {
    const job = svcServerJob({ workloadDriver: 'docker', imageRegistry: 'registry.example.com/svc', imageRegistryUsername: 'svc-builder' }).Job;
    const template = String((job.TaskGroups[0]!.Tasks[0]! as { Templates?: { EmbeddedTmpl: string }[] }).Templates?.[0]?.EmbeddedTmpl);
    const line = template.split('\n').find((l) => l.startsWith('SVC_IMAGE_REGISTRY_PASSWORD='));
    assert.ok(line !== undefined, template);
    assert.match(line, /^SVC_IMAGE_REGISTRY_PASSWORD=\{\{ *\.image_registry_password *\| *toJSON *\}\}$/, `an unquoted value is cut at # " ' by go-envparse: ${line}`);
  });
});
