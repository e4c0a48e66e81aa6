import { describe, expect, test } from 'bun:test'
import { checkVoicemailMessage, voicemailFor } from '../../../src/features/agents/voicemail'

describe('voicemail message', () => {
  test('variables are filled from the contact; one without a value is left out and the words close up', () => {
    const message = 'Hi {{firstName}}, this is Sunrise Dental about your visit. Call us back on {{ phone }}.'
    expect(voicemailFor(message, { name: 'Priya Raman', phone: '+14155550101', email: null }, '+14155550101')).toBe('Hi Priya, this is Sunrise Dental about your visit. Call us back on +14155550101.')
    expect(voicemailFor(message, { name: null, phone: '+14155550101', email: null }, '+14155550101')).toBe('Hi, this is Sunrise Dental about your visit. Call us back on +14155550101.')
    expect(voicemailFor('Hello {{name}}.', null, '+14155550199')).toBe('Hello.')
  })

  test('checked when saved: trimmed, blank, too long, unknown or unclosed variables refused naming the field', () => {
    expect(checkVoicemailMessage('  Hi {{name}}  ')).toBe('Hi {{name}}')
    expect(checkVoicemailMessage(null)).toBeNull()
    for (const bad of ['   ', 'x'.repeat(601), 'Hi {{surname}}', 'Hi {{name}', 'Hi name}}']) expect(() => checkVoicemailMessage(bad)).toThrow(/voice\.voicemailMessage/)
  })
})
