import { expect, test } from 'bun:test'
import { textOn, widgetColours } from '../../../src/features/web/colours'

test('text on the accent is whichever of black and white contrasts more', () => {
  expect(textOn('#ffffff')).toBe('#111111')
  expect(textOn('#000000')).toBe('#ffffff')
  expect(textOn('#ffd400')).toBe('#111111') // yellow: black reads
  expect(textOn('#0b6e4f')).toBe('#ffffff') // dark green: white reads
})

test('the theme gives the accent when the agent has none', () => {
  expect(widgetColours({ theme: 'modern', accent: null })).toEqual({ accent: '#2454d6', onAccent: '#ffffff' })
  expect(widgetColours({ theme: 'classic', accent: null })).toEqual({ accent: '#1f3a5f', onAccent: '#ffffff' })
  expect(widgetColours({ theme: 'classic', accent: '#eeeeee' })).toEqual({ accent: '#eeeeee', onAccent: '#111111' })
})
