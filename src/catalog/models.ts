/**
 * The language models an agent may pick. `voice` marks models quick enough for a phone call
 * (first token well under a second); reasoning models are not. `minPlan` is the cheapest plan
 * that includes the model. `local` needs no network and no key: it answers by retrieval over the
 * agent's knowledge, so the whole product runs on a machine with no provider accounts.
 */
import type { PlanId } from './plans'

export interface ModelInfo {
  id: string
  name: string
  provider: 'local' | 'openai' | 'anthropic'
  voice: boolean
  minPlan: PlanId
}

export const MODELS: readonly ModelInfo[] = [
  { id: 'local', name: 'Local retrieval responder', provider: 'local', voice: true, minPlan: 'free' },
  { id: 'gpt-4o-mini', name: 'GPT-4o mini', provider: 'openai', voice: true, minPlan: 'free' },
  { id: 'gpt-4.1-mini', name: 'GPT-4.1 mini', provider: 'openai', voice: true, minPlan: 'payg' },
  { id: 'gpt-4o', name: 'GPT-4o', provider: 'openai', voice: true, minPlan: 'payg' },
  { id: 'o3', name: 'o3 (reasoning)', provider: 'openai', voice: false, minPlan: 'pro' },
  { id: 'claude-3-5-haiku', name: 'Claude 3.5 Haiku', provider: 'anthropic', voice: true, minPlan: 'payg' },
  { id: 'claude-sonnet-4', name: 'Claude Sonnet 4', provider: 'anthropic', voice: true, minPlan: 'pro' },
  { id: 'claude-opus-4', name: 'Claude Opus 4', provider: 'anthropic', voice: false, minPlan: 'scale' },
]

const BY_ID = new Map(MODELS.map((m) => [m.id, m]))
export const findModel = (id: string): ModelInfo | undefined => BY_ID.get(id)
