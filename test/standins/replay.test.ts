/**
 * The stand-ins against what the real agents answered svc: the exchanges of
 * test/fixtures/agents/ (recorded by test/cluster/recorder.ts from Nomad and
 * Consul with ACLs on, see its README) are replayed in their recorded order,
 * scenario by scenario, on a fresh Consul stand-in and a Nomad stand-in
 * registering its services there, and each answer is held against the
 * recorded one (replay/compare.ts). IDs and indexes the agents gave are
 * mapped to the stand-ins' own (replay/ids.ts). A difference is a stand-in
 * that drifted from the real API, or a fixture from an older agent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import type { AgentFixture } from '../cluster/agent-fixtures.js';
import { happenedAt, payload, READ_HEADERS, type Exchange } from '../cluster/recorder.js';
import { startConsulStandin } from './consul/index.js';
import { startNomadStandin } from './nomad/index.js';
import { differences } from './replay/compare.js';
import { EXPECT, unreachable } from './replay/expectations.js';
import { IdMap, type Answer } from './replay/ids.js';

const fixtures = path.join(packageRoot, 'test', 'fixtures', 'agents');
const TOKEN = 'b5f1c2a0-1d6e-4c53-9a62-3f0e0c2d7a11';
const UNKNOWN_TOKEN = 'd1f3a0b2-5c4e-4f6a-8b7c-9e0d1a2b3c4d';
/**
 * A blocking query is sent with this wait: what woke it on the real agent (an
 * allocation placed, a check passing) happens at another time, or never, on
 * a stand-in; the answer's form is the same either way.
 */
const WAIT_MS = 100;
/** The stand-in's scheduler places allocations after the register answer, as Nomad does: a list may take a moment to fill. */
const SETTLE_MS = 2_000;

interface Step extends Exchange {
  readonly agent: 'nomad' | 'consul';
  readonly kind: string;
}

function load(agent: 'nomad' | 'consul'): AgentFixture {
  return JSON.parse(readFileSync(path.join(fixtures, `${agent}.json`), 'utf8')) as AgentFixture;
}

/** Every exchange of one scenario, both agents', in recorded order. */
function steps(name: string, nomad: AgentFixture, consul: AgentFixture): Step[] {
  const out: Step[] = [];
  for (const fixture of [nomad, consul]) {
    const scenario = fixture.scenarios.find((s) => s.name === name);
    for (const [kind, exchanges] of Object.entries(scenario?.kinds ?? {}))
      for (const e of exchanges) out.push({ ...e, agent: fixture.agent, kind });
  }
  return out.sort((a, b) => happenedAt(a) - happenedAt(b));
}

async function send(base: string, step: Step, ids: IdMap): Promise<Answer> {
  const { path: target, body } = ids.request(step, WAIT_MS);
  const headers: Record<string, string> = {};
  // The recorded label says whose token svc sent: any known one is the stand-in's one token.
  if (step.token !== undefined)
    headers[step.agent === 'nomad' ? 'X-Nomad-Token' : 'X-Consul-Token'] = step.token === 'unknown' ? UNKNOWN_TOKEN : TOKEN;
  const response = await fetch(`${base}${target}`, { method: step.method, headers, body, redirect: 'manual' });
  const bytes = Buffer.from(await response.arrayBuffer());
  const read: Record<string, string> = {};
  for (const name of READ_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) read[name] = value;
  }
  const answer = payload(bytes);
  return { status: response.status, headers: read, ...(answer === undefined ? {} : { body: answer }) };
}

/** Consul validates KV keys since 1.21.5, as the stand-in does by default; a recording from an older agent is replayed without. */
function validatesKeys(version: string | undefined): boolean {
  const [major = 0, minor = 0, patch = 0] = (/v(\d+)\.(\d+)\.(\d+)/.exec(version ?? '') ?? []).slice(1).map(Number);
  return version === undefined || major > 1 || (major === 1 && (minor > 21 || (minor === 21 && patch >= 5)));
}

function listLength(answer: Answer): number {
  return answer.body !== undefined && 'json' in answer.body && Array.isArray(answer.body.json) ? answer.body.json.length : -1;
}

describe("the stand-ins answer svc's requests as the real agents did (test/fixtures/agents/)", function () {
  this.timeout(120_000);
  const nomadFixture = load('nomad');
  const consulFixture = load('consul');
  const names = [...new Set([...nomadFixture.scenarios, ...consulFixture.scenarios].map((s) => s.name))];

  for (const name of names) {
    it(`replays the scenario "${name}" (${[nomadFixture, consulFixture]
      .map((f) => f.scenarios.find((s) => s.name === name)?.version)
      .filter(Boolean)
      .join(', ')})`, async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'replay-'));
      const consul = await startConsulStandin({
        aclToken: TOKEN,
        jitter: false,
        validateKvKeys: validatesKeys(consulFixture.scenarios.find((s) => s.name === name)?.version),
      });
      const nomad = await startNomadStandin({ dataDir, consulUrl: consul.url, consulToken: TOKEN, aclToken: TOKEN, namespaces: ['svc'] });
      const all = steps(name, nomadFixture, consulFixture);
      const ids = new IdMap();
      const found: string[] = [];
      let unreached = 0;
      let shorter = 0;
      let unknownIds = 0;
      try {
        for (const step of all) {
          const base = step.agent === 'nomad' ? nomad.url : consul.url;
          // A request the agent answered about something the stand-in never had answers from a state it cannot reach
          // (an error the agent gave for an ID it did not know either is still compared).
          if (step.agent === 'nomad' && step.status < 300 && ids.unknown(step)) {
            await send(base, step, ids);
            unknownIds += 1;
            continue;
          }
          let answer = await send(base, step, ids);
          const started = Date.now();
          while (
            step.agent === 'nomad' &&
            step.method === 'GET' &&
            listLength(answer) >= 0 &&
            listLength(answer) < listLength(step) &&
            Date.now() - started < SETTLE_MS
          ) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            answer = await send(base, step, ids);
          }
          // Fewer entries (instances of tasks that never ran on the stand-in): the missing ones' shape is not compared.
          if (listLength(answer) >= 0 && listLength(answer) < listLength(step)) shorter += 1;
          ids.learn(step, answer);
          if (unreachable(step.kind, step, answer)) {
            unreached += 1;
            continue;
          }
          for (const difference of differences(step, answer, EXPECT[step.kind]))
            found.push(`#${step.seq} ${step.kind} (${step.path}): ${difference}`);
        }
      } finally {
        await nomad.close();
        await consul.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
      const notes = [
        unreached > 0 ? `${unreached} answered from a state the stand-in cannot reach` : '',
        shorter > 0 ? `${shorter} lists shorter than the agent's` : '',
        unknownIds > 0 ? `${unknownIds} about an ID the stand-in never had` : '',
      ].filter(Boolean);
      console.log(`      (${all.length} exchanges replayed${notes.map((n) => `, ${n}`).join('')})`);
      assert.deepEqual(found, []);
    });
  }
});
