import { type UseFormReturnType, useForm } from '@mantine/form'
import { useMutation } from '@tanstack/react-query'
import type { z } from 'zod'
import { problemErrors, validateWith } from './problems'

export interface ApiFormOptions<Values extends Record<string, unknown>, Body, Result> {
  initialValues: Values
  /** The form's field names, dotted for nested values (`certificate.subject`). */
  fields: readonly string[]
  /** The schema the API validates the body with (core-domain). */
  schema: z.ZodType
  /** The request body of the values: empty optional inputs left out. */
  toBody: (values: Values) => Body
  submit: (body: Body) => Promise<Result>
  onDone?: (result: Result) => void
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
  const { fields, schema, toBody } = options
  const form = useForm<Values>({
    mode: 'controlled',
    initialValues: options.initialValues,
    validate: (values) => validateWith(schema, toBody(values), fields),
  })
  const mutation = useMutation({
    mutationFn: options.submit,
    onError: (error) => form.setErrors(problemErrors(error, fields)),
    onSuccess: (result) => {
      form.reset()
      options.onDone?.(result)
    },
  })
  return {
    form,
    onSubmit: form.onSubmit((values) => mutation.mutate(toBody(values))),
    pending: mutation.isPending,
  }
}

/** A trimmed text input's value, or undefined when empty (optional body members). */
export const optional = (value: string): string | undefined =>
  value.trim() === '' ? undefined : value.trim()
