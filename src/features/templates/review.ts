/**
 * The review step of a template (console `PATCH …/templates/{name}`), as a messaging platform's
 * review runs it. docs/spec.md lists the statuses and leaves the moves "not shown"; chosen here:
 *
 *   draft → pending (submitted); pending → approved | rejected; approved → paused (the platform
 *   stopped it); paused → approved (reinstated); rejected → pending (submitted again).
 *
 * Any other move, the same status included, is 409 naming the current one. A rejection or a pause
 * may carry a `reason`, kept on the template until it is submitted or approved again. Both are
 * told to the developer (docs/spec.md Events rule 8: "a template rejected"; a pause stops every send of
 * it just as surely), with the customer's name in the title inside a customer workspace.
 */
import { type Clock, iso } from '../../clock'
import { clashes, invalid, notThere } from '../../refusals'
import type { WorkspaceCollection } from '../../store/workspace-scoped'
import type { NotificationService } from '../notifications/public'
import type { TemplateDoc } from './repository'

type Status = TemplateDoc['status']
export type ReviewStatus = Exclude<Status, 'draft'>
export const REVIEW_STATUSES = ['pending', 'approved', 'rejected', 'paused'] as const satisfies readonly ReviewStatus[]

/** Where each status may move in review. */
export const REVIEW_MOVES: Record<Status, readonly ReviewStatus[]> = {
  draft: ['pending'],
  pending: ['approved', 'rejected'],
  approved: ['paused'],
  paused: ['approved'],
  rejected: ['pending'],
}

/** A reason is a reviewer's note, a sentence or two: the platforms' rejection notes are shorter. */
export const REASON_MAX = 1_000

export interface ReviewInput {
  status: ReviewStatus
  reason?: string
  language?: string
}

export class TemplateReview {
  constructor(
    private readonly templates: WorkspaceCollection<TemplateDoc>,
    private readonly notifications: NotificationService,
    private readonly clock: Clock,
  ) {}

  /**
   * Moves the template `name` (in `language`, needed when it exists in several). Copies of one name
   * and language kept for different numbers are one template to the platform's review: they move
   * together. Answers the oldest of them.
   */
  async review(workspaceId: string, name: string, input: ReviewInput): Promise<TemplateDoc> {
    const reason = input.reason?.trim() || null
    if (reason !== null && input.status !== 'rejected' && input.status !== 'paused') throw invalid('reason', 'only a rejection or a pause takes a reason')
    const templates = this.templates.in(workspaceId)
    const named = await templates.find(
      { name },
      {
        sort: [
          ['createdAt', 1],
          ['id', 1],
        ],
      },
    )
    if (!named.length) throw notThere(`no template named "${name}"`)
    const chosen = input.language === undefined ? named : named.filter((t) => t.language === input.language)
    if (!chosen.length) throw notThere(`no template named "${name}" in ${input.language} (it exists in ${languagesOf(named)})`)
    const languages = new Set(chosen.map((t) => t.language))
    if (languages.size > 1) throw invalid('language', `template "${name}" exists in ${languagesOf(chosen)}: name which one`)
    for (const t of chosen) {
      if (!REVIEW_MOVES[t.status].includes(input.status)) {
        const allowed = REVIEW_MOVES[t.status].join(' or ')
        throw clashes(`template "${name}" (${t.language}) is ${t.status}; it can move only to ${allowed}, not ${input.status}`, { state: t.status })
      }
    }
    const at = this.clock.now()
    const moved: TemplateDoc[] = []
    for (const t of chosen) moved.push((await templates.update(t.id, { status: input.status, reason })) ?? { ...t, status: input.status, reason })
    const first = moved[0]!
    if (input.status === 'rejected' || input.status === 'paused') await this.tell(first, input.status, reason, at)
    return first
  }

  private async tell(t: TemplateDoc, status: 'rejected' | 'paused', reason: string | null, at: number): Promise<void> {
    const because = reason ? `: ${reason}` : ''
    await this.notifications.notify({
      workspaceId: t.workspaceId,
      kind: `template.${status}`,
      title: `Template ${status}: ${t.name} (${t.language})`,
      body:
        `Template "${t.name}" in ${t.language} was ${status}${because}. Replies, broadcasts and sequences cannot send it until it is approved` +
        (status === 'rejected' ? '; once corrected, submit it for review again (status pending).' : ' again.'),
      data: { template: t.id, name: t.name, language: t.language, number: t.number, status, reason },
      key: `template.${status}:${t.id}:${iso(at)}`,
    })
  }
}

const languagesOf = (templates: TemplateDoc[]) => [...new Set(templates.map((t) => t.language))].join(', ')
