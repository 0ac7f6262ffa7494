/**
 * A small XML well-formedness checker for tests (the chart is XML; no XML parser is a dependency): one root element,
 * every tag closed in order, attributes quoted and unique, `<` never in text or values, `&` only as an entity.
 * Returns the elements it read so a test can look for the ones it expects.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  /** Text directly inside the element (entities left as written). */
  text: string;
  children: XmlElement[];
}

export class XmlNotWellFormedError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'XmlNotWellFormedError';
  }
}

const NAME_START = /[A-Za-z_:]/;
const NAME_CHAR = /[A-Za-z0-9_:.-]/;
const ENTITY = /^&(#\d+|#x[0-9a-fA-F]+|amp|lt|gt|quot|apos);/;

/** Parses `xml` strictly; throws XmlNotWellFormedError with the offset of the first problem. */
export function parseXml(xml: string): XmlElement {
  let i = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const fail = (message: string): never => {
    throw new XmlNotWellFormedError(message, i);
  };
  const checkText = (text: string, start: number) => {
    for (let k = 0; k < text.length; k++) {
      if (text[k] === '&' && !ENTITY.test(text.slice(k))) throw new XmlNotWellFormedError('bare "&"', start + k);
    }
  };
  const readName = (): string => {
    const start = i;
    if (!NAME_START.test(xml[i] ?? '')) fail('expected a name');
    while (NAME_CHAR.test(xml[i] ?? '')) i++;
    return xml.slice(start, i);
  };
  const skipSpace = () => {
    while (/\s/.test(xml[i] ?? '')) i++;
  };

  while (i < xml.length) {
    if (xml.startsWith('<?', i)) {
      const end = xml.indexOf('?>', i);
      if (end < 0) fail('unclosed processing instruction');
      i = end + 2;
    } else if (xml.startsWith('<!--', i)) {
      const end = xml.indexOf('-->', i);
      if (end < 0) fail('unclosed comment');
      i = end + 3;
    } else if (xml.startsWith('</', i)) {
      i += 2;
      const name = readName();
      skipSpace();
      if (xml[i] !== '>') fail(`expected ">" closing </${name}`);
      i++;
      const open = stack.pop();
      if (open?.name !== name) fail(`</${name}> closes <${open?.name ?? '(nothing)'}>`);
    } else if (xml[i] === '<') {
      i++;
      if (root !== undefined && stack.length === 0) fail('a second root element');
      const element: XmlElement = { name: readName(), attributes: {}, text: '', children: [] };
      for (;;) {
        const before = i;
        skipSpace();
        if (xml.startsWith('/>', i) || xml[i] === '>') break;
        if (i === before) fail('expected whitespace before an attribute');
        const attr = readName();
        skipSpace();
        if (xml[i] !== '=') fail(`attribute ${attr} has no "="`);
        i++;
        skipSpace();
        const quote = xml[i];
        if (quote !== '"' && quote !== "'") fail(`attribute ${attr} is not quoted`);
        const end = xml.indexOf(quote as string, i + 1);
        if (end < 0) fail(`attribute ${attr} is not closed`);
        const value = xml.slice(i + 1, end);
        if (value.includes('<')) fail(`"<" in the value of ${attr}`);
        checkText(value, i + 1);
        if (attr in element.attributes) fail(`duplicate attribute ${attr}`);
        element.attributes[attr] = value;
        i = end + 1;
      }
      const parent = stack[stack.length - 1];
      if (parent === undefined) root = element;
      else parent.children.push(element);
      if (xml.startsWith('/>', i)) {
        i += 2;
      } else {
        i++;
        stack.push(element);
      }
    } else {
      const next = xml.indexOf('<', i);
      const end = next < 0 ? xml.length : next;
      const text = xml.slice(i, end);
      const parent = stack[stack.length - 1];
      if (parent === undefined) {
        if (text.trim() !== '') fail('text outside the root element');
      } else {
        checkText(text, i);
        parent.text += text;
      }
      i = end;
    }
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1]?.name}> is never closed`);
  if (root === undefined) fail('no root element');
  return root as XmlElement;
}

/** Every element of the tree, depth first. */
export function allElements(root: XmlElement): XmlElement[] {
  return [root, ...root.children.flatMap(allElements)];
}
