/** What other features may use of campaigns: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { CampaignService } from './service'

export interface CampaignsServices {
  campaigns: CampaignService
}

export const campaignsRef = featureRef<CampaignsServices>('campaigns')
