/** What other features may use of sequences: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { SequenceService } from './service'

export interface SequencesServices {
  sequences: SequenceService
}

export const sequencesRef = featureRef<SequencesServices>('sequences')
