// A page whose feature has not reached the dashboard yet: says what will be here.
import { PageHeader } from '../components.js';

export function Placeholder({ title, text }: { title: string; text: string }) {
  return (
    <section>
      <PageHeader title={title} />
      <div class="panel placeholder">
        <p>{text}</p>
      </div>
    </section>
  );
}
