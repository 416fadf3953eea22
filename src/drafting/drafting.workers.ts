import type { Deps } from '../deps'
import { draftRunQueue } from './drafting.jobs'
import { runDraft } from './drafting.service'

/** The drafting worker (role all | worker): one provider call per admitted draft. */
export async function startDraftingWorkers(deps: Deps): Promise<void> {
  await deps.jobs.work(draftRunQueue, ({ draftId }) => runDraft(deps, draftId))
}
