/** What other features may use of customers: its ref (for `use`) and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { CustomerLifecycle } from './lifecycle'
import type { CustomerService } from './service'

export interface CustomersServices {
  customers: CustomerService
  lifecycle: CustomerLifecycle
}

export const customersRef = featureRef<CustomersServices>('customers')

export { checkMetadata } from './rules'
