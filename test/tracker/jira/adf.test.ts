import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adfToText, textToAdf } from '../../../src/tracker/jira/adf.js';

const p = (...content: unknown[]) => ({ type: 'paragraph', content });
const t = (text: string, marks?: unknown[]) => ({ type: 'text', text, ...(marks ? { marks } : {}) });
const doc = (...content: unknown[]) => ({ type: 'doc', version: 1, content });
const item = (...content: unknown[]) => ({ type: 'listItem', content });

describe('ADF', () => {
  it('plain text survives a round trip through ADF, blank lines included', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[^\n\r]*$/), { minLength: 1, maxLength: 6 }), (lines) => {
        const text = lines.join('\n').replace(/\n+$/, '');
        expect(adfToText(textToAdf(text))).toBe(text);
      }),
    );
  });

  it('a comment is one paragraph per line, and an empty line is an empty paragraph (Jira refuses empty text nodes)', () => {
    expect(textToAdf('one\n\ntwo')).toEqual(doc(p(t('one')), { type: 'paragraph' }, p(t('two'))));
  });

  it('marks are dropped, hard breaks are newlines', () => {
    expect(
      adfToText(
        doc(
          p(
            t('bold', [{ type: 'strong' }]),
            t(' and '),
            t('code', [{ type: 'code' }]),
            { type: 'hardBreak' },
            t('next'),
          ),
        ),
      ),
    ).toBe('bold and code\nnext');
  });

  it('lists keep their bullets, numbers and nesting', () => {
    const nested = {
      type: 'bulletList',
      content: [item(p(t('inner'))), item(p(t('inner 2')))],
    };
    const value = doc(
      { type: 'bulletList', content: [item(p(t('one'))), item(p(t('two')), nested)] },
      { type: 'orderedList', attrs: { order: 3 }, content: [item(p(t('third'))), item(p(t('fourth')))] },
    );
    expect(adfToText(value)).toBe('- one\n- two\n  - inner\n  - inner 2\n3. third\n4. fourth');
  });

  it('a code block is fenced with its language, its lines untouched', () => {
    const value = doc(p(t('run:')), {
      type: 'codeBlock',
      attrs: { language: 'sh' },
      content: [t('npm test\n  --watch')],
    });
    expect(adfToText(value)).toBe('run:\n```sh\nnpm test\n  --watch\n```');
  });

  it('mentions, emoji, links, statuses and dates read as a person would read them', () => {
    const value = doc(
      p(
        { type: 'mention', attrs: { id: 'acc-1', text: '@Alice' } },
        t(' and '),
        { type: 'mention', attrs: { id: 'acc-2', text: 'Bob' } },
        t(' '),
        { type: 'emoji', attrs: { shortName: ':smile:', text: '😄' } },
        t(' see '),
        { type: 'inlineCard', attrs: { url: 'https://x.test/a' } },
        t(' '),
        { type: 'status', attrs: { text: 'BLOCKED', color: 'red' } },
        t(' by '),
        { type: 'date', attrs: { timestamp: '1767225600000' } },
      ),
    );
    expect(adfToText(value)).toBe('@Alice and @Bob 😄 see https://x.test/a [BLOCKED] by 2026-01-01');
  });

  it('headings, quotes, rules, panels and tables keep their words', () => {
    const value = doc(
      { type: 'heading', attrs: { level: 2 }, content: [t('Plan')] },
      { type: 'blockquote', content: [p(t('quoted'))] },
      { type: 'rule' },
      { type: 'panel', attrs: { panelType: 'info' }, content: [p(t('note'))] },
      {
        type: 'table',
        content: [
          {
            type: 'tableRow',
            content: [
              { type: 'tableHeader', content: [p(t('a'))] },
              { type: 'tableHeader', content: [p(t('b'))] },
            ],
          },
          {
            type: 'tableRow',
            content: [
              { type: 'tableCell', content: [p(t('1'))] },
              { type: 'tableCell', content: [p(t('2'))] },
            ],
          },
        ],
      },
    );
    expect(adfToText(value)).toBe('## Plan\n> quoted\n---\nnote\na | b\n1 | 2');
  });

  it('a node type it does not know still gives its text', () => {
    expect(
      adfToText(
        doc(
          { type: 'futureBlock', content: [p(t('kept'))] },
          p({ type: 'futureInline', content: [t('also')] }),
        ),
      ),
    ).toBe('kept\nalso');
  });

  it('null, garbage and plain strings (the v2 API) are read without failing', () => {
    expect(adfToText(null)).toBe('');
    expect(adfToText({ no: 'type' })).toBe('');
    expect(adfToText('wiki *markup* as is')).toBe('wiki *markup* as is');
  });
});
