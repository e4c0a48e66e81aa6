import { expect, test } from 'bun:test'
import { chooseInMenu } from '../../../src/providers/llm/local'

test("a phone menu's option is chosen only when exactly one fits what the call is about", () => {
  const context = 'You call clinics to book an appointment for a patient.'
  expect(chooseInMenu('Press 1 for appointments, press 2 for billing.', context)).toBe('1')
  expect(chooseInMenu('For billing, press 2. For appointments, press 1.', context)).toBe('1')
  expect(chooseInMenu('To book an appointment press 3, to cancel an appointment press 4.', context)).toBeNull()
  expect(chooseInMenu('Press 1 for billing, press 2 for pharmacy.', context)).toBeNull()
  expect(chooseInMenu('Hello, this is the clinic.', context)).toBeNull()
})
