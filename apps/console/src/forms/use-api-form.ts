import type { ValidationIssue } from '@credential-service/core-domain'
import { type UseFormReturnType, useForm } from '@mantine/form'
import { useMutation } from '@tanstack/react-query'
import { useRef } from 'react'
import type { z } from 'zod'
import { toastDone } from '../components/toast'
import { fieldOf, problemErrors, validateWith } from './problems'

export interface ApiFormOptions<Values extends Record<string, unknown>, Body, Result> {
  initialValues: Values
  /**
   * The form's field names, dotted for nested values (`certificate.subject`); a function of the
   * values when rows come and go (`fields.3.path`).
   */
  fields: readonly string[] | ((values: Values) => readonly string[])
  /** The schema the API validates the body with (core-domain). */
  schema: z.ZodType
  /**
   * The rules the API checks beyond the shape (core-domain `check…`, answered as 422), run on a
   * body the schema accepted; issue paths start with `body.`.
   */
  check?: (body: Body) => ValidationIssue[]
  /** The request body of the values: empty optional inputs left out. */
  toBody: (values: Values) => Body
  submit: (body: Body) => Promise<Result>
  onDone?: (result: Result) => void
  /** The success toast ("Saved" when absent); false: none, the page shows the result itself. */
  success?: string | false
}

export interface ApiForm<Values extends Record<string, unknown>> {
  form: UseFormReturnType<Values>
  onSubmit: (event?: React.FormEvent<HTMLFormElement>) => void
  pending: boolean
}

/**
 * A form checked in the browser with the API's own zod schema, then sent; a refusal's problem
 * `errors[]` land on the fields they name, the rest in the form's message (`form.errors['']`).
 */
export function useApiForm<Values extends Record<string, unknown>, Body, Result>(
  options: ApiFormOptions<Values, Body, Result>,
): ApiForm<Values> {
  // The latest options: the form keeps the first validate function it was given.
  const latest = useRef(options)
  latest.current = options
  const fieldsOf = (values: Values) => {
    const { fields } = latest.current
    return typeof fields === 'function' ? fields(values) : fields
  }
  const form = useForm<Values>({
    mode: 'controlled',
    initialValues: options.initialValues,
    validate: (values) => {
      const { schema, toBody, check } = latest.current
      const body = toBody(values)
      const errors = validateWith(schema, body, fieldsOf(values))
      if (Object.keys(errors).length > 0 || !check) return errors
      for (const { path, message } of check(body))
        errors[fieldOf(path.replace(/^body\.?/, ''), fieldsOf(values)) ?? ''] ??= message
      return errors
    },
  })
  const mutation = useMutation({
    mutationFn: options.submit,
    onError: (error) => form.setErrors(problemErrors(error, fieldsOf(form.getValues()))),
    onSuccess: (result) => {
      form.reset()
      const { success = 'Saved' } = latest.current
      if (success) toastDone(success)
      options.onDone?.(result)
    },
  })
  return {
    form,
    onSubmit: form.onSubmit((values) => mutation.mutate(latest.current.toBody(values))),
    pending: mutation.isPending,
  }
}

/** A trimmed text input's value, or undefined when empty (optional body members). */
export const optional = (value: string): string | undefined =>
  value.trim() === '' ? undefined : value.trim()
