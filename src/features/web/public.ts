/** What other features may use of website chat: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { WebChat } from './service'
import type { VisitorSessions } from './sessions'
import type { TeammateMessages } from './teammates'

export interface WebServices {
  web: WebChat
  sessions: VisitorSessions
  teammates: TeammateMessages
}

export const webRef = featureRef<WebServices>('web')
