// The return form of an order's page: by items (a line and a quantity) or by an amount, with a reason. One
// idempotency key per submission, kept until the service answered it, so a resend after a lost answer returns once.
// A return beyond what is left (409 return_exceeds_order) is shown as the refusal it is.
import { useState } from 'preact/hooks';
import { ApiError, call, messageOf } from '../api.js';
import { AnswerNote, money, type FormAnswer } from '../components.js';

const newKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

interface ReturnableOrder {
  id: string;
  currency: string;
  amount: number;
  returnedAmount: number;
  items: Array<{ sku?: string | undefined; productId?: string | undefined; quantity: number; price: number }>;
}

/** "12.50" or "12" → 1250; undefined unless a positive amount with at most two decimals. */
function minorUnits(text: string): number | undefined {
  const match = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

export function ReturnForm({ order, onReturned }: { order: ReturnableOrder; onReturned: () => void }) {
  const [by, setBy] = useState<'items' | 'amount'>(order.items.length ? 'items' : 'amount');
  const [line, setLine] = useState('0');
  const [quantity, setQuantity] = useState('1');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [answer, setAnswer] = useState<FormAnswer | undefined>(undefined);
  const [idempotencyKey, setIdempotencyKey] = useState(newKey);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    let ask: { items: [{ index: number; quantity: number }] } | { amount: number };
    if (by === 'items') {
      const count = Number(quantity);
      if (!Number.isSafeInteger(count) || count < 1) return setAnswer({ tone: 'bad', text: 'Quantity: a whole number of at least 1.' });
      ask = { items: [{ index: Number(line), quantity: count }] };
    } else {
      const value = minorUnits(amount);
      if (value === undefined) return setAnswer({ tone: 'bad', text: `Amount: a positive amount in ${order.currency}, such as 12.50.` });
      ask = { amount: value };
    }
    setBusy(true);
    try {
      const reply = await call('orders.return', { id: order.id, ...ask, idempotencyKey, ...(reason.trim() ? { reason: reason.trim() } : {}) });
      setIdempotencyKey(newKey());
      setAnswer({ tone: 'good', text: `Returned ${money(reply.amount, order.currency)}; the order is ${reply.status === 'RETURNED' ? 'returned whole' : 'partially returned'}.` });
      setAmount('');
      setReason('');
      onReturned();
    } catch (error) {
      if (error instanceof ApiError) setIdempotencyKey(newKey());
      const exceeds = error instanceof ApiError && error.code === 'return_exceeds_order';
      setAnswer({ tone: 'bad', text: exceeds ? `Refused: more than is left of the order. ${messageOf(error)}` : messageOf(error) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel inline-form" aria-label="Return" onSubmit={(e) => void submit(e)}>
      <label for="return-by">Return by</label>
      <select id="return-by" value={by} onChange={(e) => setBy(e.currentTarget.value as 'items' | 'amount')}>
        {order.items.length > 0 && <option value="items">Items</option>}
        <option value="amount">Amount</option>
      </select>
      {by === 'items' ? (
        <>
          <label for="return-line">Line</label>
          <select id="return-line" value={line} onChange={(e) => setLine(e.currentTarget.value)}>
            {order.items.map((item, index) => (
              <option value={String(index)}>
                {index + 1}. {item.sku ?? item.productId ?? 'item'} ({item.quantity} × {money(item.price, order.currency)})
              </option>
            ))}
          </select>
          <label for="return-quantity">Quantity</label>
          <input id="return-quantity" type="number" min={1} step={1} inputMode="numeric" value={quantity} onInput={(e) => setQuantity(e.currentTarget.value)} />
        </>
      ) : (
        <>
          <label for="return-amount">Amount</label>
          <input id="return-amount" placeholder={`12.50 (${order.currency})`} inputMode="decimal" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
        </>
      )}
      <label for="return-reason">Reason</label>
      <input id="return-reason" placeholder="too small" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <button type="submit" class="button-primary" disabled={busy}>
        Return
      </button>
      <AnswerNote answer={answer} />
    </form>
  );
}
