/**
 * Volumes: the workspace's volumes with what they hold (bytes against the limit, files, the last
 * change), the workloads that mount each, and when each was made. Files move with the CLI or Python (docs/volumes.md), which the
 * page says how; it changes nothing itself.
 */
import { formatBytes } from '../../../model/format-bytes.js';
import { MAX_LIST_ENTRIES } from '../../../infra/volumes/file-errors.js';
import type { EntriesListing, VolumeAnswer } from '../../../services/volumes/types.js';
import { withUsers } from '../../api/volumes.js';
import { html, type Html } from '../html.js';
import { page } from '../layout.js';
import { renderErrors, sendPage } from '../respond.js';
import type { Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';
import { signedIn } from '../viewer.js';

interface VolumeRow {
  readonly volume: VolumeAnswer;
  /** Its files (counted in the first MAX_LIST_ENTRIES entries: "at least …" past them), or why they were not counted (a volume that cannot be read now). */
  readonly files: number | string;
  readonly lastChange: string | null;
}

export function volumePages(services: DashboardServices) {
  return {
    async list(ctx: Context): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const workspace = viewer.principal.workspace;
        const volumes = await services.volumes.list(workspace);
        const rows = await Promise.all(volumes.map((volume) => rowOf(services, workspace, withUsers(services, workspace, volume))));
        sendPage(
          ctx,
          page({
            title: 'Volumes',
            section: 'volumes',
            viewer,
            body: html`<section aria-labelledby="volume-list">
  <h2 id="volume-list">Volumes of ${viewer.session.workspace}</h2>
  ${rows.length === 0 ? html`<p>No volumes yet.</p>` : volumeTable(rows)}
  <p class="help">Create one and move files with <code>svc volume create models</code>, <code>svc volume put models ./weights</code>, or from Python with <code>svc.Volume.from_name("models", create_if_missing=True)</code>.</p>
</section>`,
          }),
        );
      });
    },
  };
}

async function rowOf(services: DashboardServices, workspace: string, volume: VolumeAnswer): Promise<VolumeRow> {
  // A volume whose size could not be read would keep the page waiting for its files too.
  if (volume.bytes === null) return { volume, files: 'unknown now', lastChange: null };
  // One page of its entries: a volume of a million files is not walked whole for each view of the page.
  let listing: EntriesListing;
  try {
    listing = await services.volumes.ls(workspace, volume.name, '', true, { after: null, limit: MAX_LIST_ENTRIES });
  } catch (error) {
    return { volume, files: error instanceof Error ? error.message : String(error), lastChange: null };
  }
  const { entries, next } = listing;
  const files = entries.filter((e) => e.type === 'file').length;
  const lastChange = entries.reduce<string | null>((latest, e) => (latest === null || e.modifiedAt > latest ? e.modifiedAt : latest), null);
  return { volume, files: next === null ? files : `at least ${files}`, lastChange: next === null ? lastChange : null };
}

function volumeTable(rows: readonly VolumeRow[]): Html {
  return html`<div class="scroll"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Files</th><th scope="col">Last change</th><th scope="col">Mounted by</th><th scope="col">Created</th></tr></thead>
    <tbody>${rows.map(
      ({ volume, files, lastChange }) => html`<tr>
      <th scope="row"><code>${volume.name}</code></th>
      <td>${volume.bytes === null ? html`unknown now <span class="help">(${volume.bytesError ?? ''})</span>` : formatBytes(volume.bytes)} of ${formatBytes(volume.maxBytes)}</td>
      <td>${String(files)}</td>
      <td>${lastChange === null ? '—' : html`<time datetime="${lastChange}">${lastChange.slice(0, 16).replace('T', ' ')} UTC</time>`}</td>
      <td>${volume.mountedBy.length === 0 ? '—' : volume.mountedBy.map((user, i) => html`${i > 0 ? ', ' : ''}<code>${user}</code>`)}</td>
      <td><time datetime="${volume.createdAt}">${volume.createdAt.slice(0, 16).replace('T', ' ')} UTC</time></td>
    </tr>`,
    )}</tbody>
  </table></div>`;
}
