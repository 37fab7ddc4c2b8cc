/** The model catalogue with prices. */
import { api } from '../api';
import { ErrorMessage, Loading, PageHeader, useAsync } from '../components';

const price = (value: number | undefined) => (value === undefined ? '—' : `$${value}`);

export function ModelsPage() {
  const models = useAsync(() => api().models.list(), []);
  return (
    <>
      <PageHeader title="Models" />
      <ErrorMessage error={models.error} />
      {models.loading ? <Loading /> : null}
      {models.data ? (
        <div class="table-scroll">
          <table data-testid="models">
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Model</th>
                <th scope="col">Input, USD per million tokens</th>
                <th scope="col">Output, USD per million tokens</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
