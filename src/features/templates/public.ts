/** What other features may use of templates: its ref (for `use`) and types; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { TemplateService } from './service'

export interface TemplatesServices {
  templates: TemplateService
}

export const templatesRef = featureRef<TemplatesServices>('templates')

export type { FormDoc, TemplateDoc } from './repository'
export type { TemplateService } from './service'
