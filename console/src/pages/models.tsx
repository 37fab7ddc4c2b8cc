/** The model catalogue with prices. */
import { api } from '../api';
import { ErrorMessage, Loading, PageHeader, Table, useAsync } from '../components';

const price = (value: number | undefined) => (value === undefined ? '—' : `$${value}`);

export function ModelsPage() {
  const models = useAsync(() => api().models.list(), []);
  return (
    <>
      <PageHeader title="Models" />
      <ErrorMessage error={models.error} />
      {models.loading ? <Loading /> : null}
      {models.data ? (
        <Table testId="models" columns={['Provider', 'Model', 'Input, USD per million tokens', 'Output, USD per million tokens']}>
          {models.data.models.map((model) => (
            <tr key={`${model.provider}/${model.name}`} data-testid="model-row">
              <td>{model.provider}</td>
              <td>
                <code>{model.name}</code>
              </td>
              <td class="number">{price(model.input_usd_per_mtok)}</td>
              <td class="number">{price(model.output_usd_per_mtok)}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </>
  );
}
