// Fields of the campaign form that load or explain something: the currency (asked for when the template is money and
// no workspace default prices it) and a referral program's referrer reward, from the rewards catalog.
import { call } from '../api.js';
import { ErrorNote, useLoad } from '../components.js';

/** `defaultCurrency`: the workspace's (null: it has none; undefined: the role cannot read the workspace). */
export function CurrencyField(props: { value: string; money: boolean; defaultCurrency: string | null | undefined; onInput: (value: string) => void }) {
  const { value, money, defaultCurrency, onInput } = props;
  const hint = defaultCurrency
    ? `Left empty, amounts are in the workspace default, ${defaultCurrency}.`
    : !money
      ? 'Optional: the discount names no amount of money, so it applies in any currency.'
      : defaultCurrency === null
        ? 'Amounts need a currency: the workspace has no default currency.'
        : 'Amounts need a currency (unless the workspace has a default currency).';
  return (
    <>
      <label for="campaign-currency">Currency</label>
      <input
        id="campaign-currency"
        aria-describedby="campaign-currency-hint"
        placeholder={defaultCurrency ? `${defaultCurrency} (workspace default)` : 'e.g. EUR'}
        maxLength={3}
        required={money && !defaultCurrency}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <span id="campaign-currency-hint" class="muted small">
        {hint}
      </span>
    </>
  );
}

/** A referral program's referrer reward: required, one of the catalog's rewards. */
export function ReferrerReward({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  const rewards = useLoad(() => call('rewards.list', { limit: 100 }), []);
  const list = rewards.value?.data ?? [];
  return (
    <>
      <label for="campaign-referrer-reward">Referrer reward</label>
      <select id="campaign-referrer-reward" required value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">{rewards.value && !list.length ? 'No rewards in the catalog yet' : 'Choose a reward'}</option>
        {list.map((r) => (
          <option value={r.id}>{r.name}</option>
        ))}
      </select>
      <ErrorNote error={rewards.error} />
    </>
  );
}
