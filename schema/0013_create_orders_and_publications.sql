-- Orders (the caller's orders, linked to redemptions by order id) and publications (a campaign's code given to a
-- customer).
CREATE TABLE orders (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id text,
  status text NOT NULL CHECK (status IN ('CREATED', 'PAID', 'CANCELED', 'FULFILLED')),
  amount bigint NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  items jsonb NOT NULL DEFAULT '[]',
  customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT orders_source_id_unique UNIQUE (workspace_id, source_id)
);
CREATE INDEX orders_by_created ON orders (workspace_id, created_at DESC, id DESC);
CREATE INDEX orders_by_customer ON orders (workspace_id, customer_id, created_at DESC, id DESC) WHERE customer_id IS NOT NULL;

CREATE TABLE publications (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  voucher_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A code is published once: the last line of defence behind the campaign lock of publications.create.
  CONSTRAINT publications_voucher_unique UNIQUE (voucher_id)
);
CREATE INDEX publications_by_campaign_customer ON publications (campaign_id, customer_id);
CREATE INDEX publications_by_created ON publications (workspace_id, created_at DESC, id DESC);
CREATE INDEX publications_by_customer ON publications (workspace_id, customer_id, created_at DESC, id DESC);
-- Where publishing finds a campaign's next free code without walking past the codes given out already.
CREATE INDEX vouchers_unassigned_by_campaign ON vouchers (campaign_id, created_at, id) WHERE kind = 'CODE' AND customer_id IS NULL;
