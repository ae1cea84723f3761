// The discount part of the campaign and tier forms: what is given (a select), its value beside it, and the fields of
// the chosen kind: a cap, the unit given, the items targeted, buy X get Y's quantities and the items given.
import { DISCOUNT_CHOICES, type DiscountDraft, type DiscountKind, type TargetDraft } from './discount-draft.js';

export interface Choice {
  value: string;
  label: string;
}

const PLACEHOLDERS: Record<string, string> = { percent: '10', amount: '25.00', fixed: '20.00', unit: '1', gift: '25.00' };
const isKind = (choice: string): choice is DiscountKind => DISCOUNT_CHOICES.some((c) => c.value === choice);

function TextField(props: { id: string; label: string; placeholder: string; value: string; onInput: (value: string) => void; wide?: boolean }) {
  const { id, label, placeholder, value, onInput } = props;
  return (
    <div class={props.wide ? 'field field-wide' : 'field'}>
      <label for={id}>{label}</label>
      <input id={id} placeholder={placeholder} value={value} onInput={(e) => onInput(e.currentTarget.value)} />
    </div>
  );
}

const TARGET_FIELDS: readonly { key: keyof TargetDraft; bought: string; given: string; placeholder: string }[] = [
  { key: 'categories', bought: 'Categories', given: 'Get categories', placeholder: 'e.g. shirts, shoes' },
  { key: 'collections', bought: 'Collections', given: 'Get collections', placeholder: 'optional' },
  { key: 'productIds', bought: 'Product ids', given: 'Get product ids', placeholder: 'optional' },
  { key: 'skus', bought: 'SKUs', given: 'Get SKUs', placeholder: 'optional' },
  { key: 'metadata', bought: 'Metadata (JSON)', given: 'Get metadata (JSON)', placeholder: 'optional, e.g. {"brand": "acme"}' },
];

/** The items a target names (every field given must match): the items discounted or bought, or the items given. */
function TargetFields({ id, legend, side, target, onChange }: { id: string; legend: string; side: 'bought' | 'given'; target: TargetDraft; onChange: (t: TargetDraft) => void }) {
  return (
    <fieldset class="discount-group">
      <legend>{legend}</legend>
      {TARGET_FIELDS.map((f) => (
        <TextField id={`${id}-${f.key}`} wide={f.key === 'metadata'} label={f[side]} placeholder={f.placeholder} value={target[f.key]} onInput={(v) => onChange({ ...target, [f.key]: v })} />
      ))}
    </fieldset>
  );
}

function KindFields({ id, kind, draft, onChange }: { id: string; kind: DiscountKind; draft: DiscountDraft; onChange: (d: DiscountDraft) => void }) {
  const field = (key: Exclude<keyof DiscountDraft, 'target' | 'getTarget'>, label: string, placeholder: string) => (
    <TextField id={`${id}-${key}`} label={label} placeholder={placeholder} value={draft[key]} onInput={(v) => onChange({ ...draft, [key]: v })} />
  );
  if (kind === 'free-shipping') return null;
  const target = (legend: string) => <TargetFields id={id} legend={legend} side="bought" target={draft.target} onChange={(t) => onChange({ ...draft, target: t })} />;
  if (kind !== 'buy-x-get-y') {
    return (
      <>
        {kind === 'percent' && (
          <>
            <label for={`${id}-amountLimit`}>At most off (amount)</label>
            <input id={`${id}-amountLimit`} inputMode="decimal" placeholder="no cap" value={draft.amountLimit} onInput={(e) => onChange({ ...draft, amountLimit: e.currentTarget.value })} />
          </>
        )}
        {kind === 'unit' && (
          <fieldset class="discount-group">
            <legend>The unit given (a product id or a SKU)</legend>
            {field('unitProductId', 'Unit product id', 'e.g. prod_42')}
            {field('unitSku', 'Unit SKU', 'e.g. SOCK-M')}
          </fieldset>
        )}
        {target('Only these items (empty: the whole order)')}
      </>
    );
  }
  return (
    <>
      {target('The items bought (every field given must match)')}
      <fieldset class="discount-group">
        <legend>Each group</legend>
        {field('buyQuantity', 'Buy quantity', '2')}
        {field('getQuantity', 'Get quantity', '1')}
        {field('getPercentOff', 'Percent off the units given', '100')}
        {field('maxApplications', 'At most … times', 'unlimited')}
      </fieldset>
      <TargetFields id={`${id}-get`} legend="The items given (empty: the items bought)" side="given" target={draft.getTarget} onChange={(t) => onChange({ ...draft, getTarget: t })} />
    </>
  );
}

/** The select (the discount kinds and `extraChoices`), the value beside it when the choice has one, the kind's fields. */
export function DiscountFields(props: {
  id: string;
  label: string;
  valueLabel: string;
  choice: string;
  extraChoices?: readonly Choice[];
  onChoice: (choice: string) => void;
  draft: DiscountDraft;
  onChange: (draft: DiscountDraft) => void;
}) {
  const { id, choice, draft, onChange } = props;
  const placeholder = PLACEHOLDERS[choice];
  return (
    <>
      <label for={`${id}-discount`}>{props.label}</label>
      <div class="row">
        <select id={`${id}-discount`} value={choice} onChange={(e) => props.onChoice(e.currentTarget.value)}>
          {[...DISCOUNT_CHOICES, ...(props.extraChoices ?? [])].map((c) => (
            <option value={c.value}>{c.label}</option>
          ))}
        </select>
        {placeholder !== undefined && (
          <input aria-label={props.valueLabel} required inputMode="decimal" placeholder={placeholder} value={draft.value} onInput={(e) => onChange({ ...draft, value: e.currentTarget.value })} />
        )}
      </div>
      {isKind(choice) && <KindFields id={id} kind={choice} draft={draft} onChange={onChange} />}
    </>
  );
}
