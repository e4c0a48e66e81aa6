/**
 * Inbound mail over SMTP (optional: `SMTP_LISTEN_PORT`): mail to `{agentId}@{any domain}` reaches
 * that agent as an email conversation, exactly as the console's `inbound` with `channel: email`
 * does, and the agent answers by email. Point an MX record (or a relay) at it. Recipients that are
 * not an agent are refused at RCPT (550) so the sender's server bounces the mail; a message we
 * cannot take is refused after DATA with the reason, so nothing is accepted and then lost.
 * Plain SMTP without AUTH, as a mail exchanger receives; TLS and sender checks (SPF/DKIM) are the
 * relay's in front of it.
 */

import { convert } from 'html-to-text'
import { type AddressObject, simpleParser } from 'mailparser'
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import { isRefused } from '../../refusals'
import type { AgentService } from '../agents/public'
import type { EmailInbound } from './email'

/** 10 MB: a mail with a photo or two; announced with SIZE, larger ones are refused (552). */
export const MAX_MAIL_BYTES = 10 * 1024 * 1024
/** 20,000 characters of text: a long email with its quoted history; longer is refused, not cut. */
export const MAX_MAIL_TEXT = 20_000

/** An SMTP reply the sending server shows its user (smtp-server reads `responseCode`). */
function refusal(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code })
}

export class SmtpListener {
  private readonly server: SMTPServer
  port = 0

  constructor(
    private readonly d: {
      agents: AgentService
      workspace: (id: string) => Promise<WorkspaceDoc | null>
      email: EmailInbound
      hostname: string
      logger: Logger
    },
  ) {
    this.server = new SMTPServer({
      name: d.hostname,
      banner: 'agent mail',
      size: MAX_MAIL_BYTES,
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, done) => {
        this.agentOf(address)
          .then((agent) => done(agent ? null : refusal(550, `no agent at ${address.address}`)))
          .catch((err) => done(refusal(451, `try again later (${(err as Error).message})`)))
      },
      onData: (stream, session, done) => {
        this.take(stream, session)
          .then(() => done())
          .catch((err) =>
            done(isRefused(err) ? refusal(550, err.message) : (err as { responseCode?: number }).responseCode ? (err as Error) : refusal(451, 'could not store the message; try again later')),
          )
      },
    })
    this.server.on('error', (err) => d.logger.warn({ err }, 'SMTP listener error'))
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.server.once('error', reject)
      this.server.listen(port, host, () => {
        const address = this.server.server.address()
        this.port = typeof address === 'object' && address ? address.port : port
        resolve()
      })
    })
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }

  private async agentOf(address: SMTPServerAddress) {
    const local = address.address.split('@')[0] ?? ''
    return /^ag_[A-Za-z0-9]+$/.test(local) ? this.d.agents.find(local) : null
  }

  private async take(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<void> {
    const mail = await simpleParser(stream)
    if (stream.sizeExceeded) throw refusal(552, `message over ${MAX_MAIL_BYTES} bytes`)
    const from = firstAddress(mail.from) ?? (session.envelope.mailFrom ? session.envelope.mailFrom.address : null)
    if (!from) throw refusal(550, 'the message has no sender address')
    const text = (mail.text?.trim() || (mail.html ? convert(mail.html, { wordwrap: false }).trim() : '') || mail.subject?.trim() || '').trim()
    if (!text) throw refusal(550, 'the message has no text')
    if (text.length > MAX_MAIL_TEXT) throw refusal(552, `the message text is over ${MAX_MAIL_TEXT} characters`)
    // Every recipient is checked before any is stored: a refusal must leave nothing half-taken.
    const targets = []
    for (const rcpt of session.envelope.rcptTo) {
      const agent = await this.agentOf(rcpt)
      const workspace = agent ? await this.d.workspace(agent.workspaceId) : null
      if (!agent || !workspace) throw refusal(550, `no agent at ${rcpt.address}`)
      targets.push({ agent, workspace })
    }
    for (const { agent, workspace } of targets) await this.d.email.receive(workspace, { from, to: agent.id, text })
  }
}

function firstAddress(from: AddressObject | AddressObject[] | undefined): string | null {
  const list = Array.isArray(from) ? from : from ? [from] : []
  for (const group of list) for (const a of group.value) if (a.address) return a.address
  return null
}
