// V8's own view of objects, for tests of what a fleet node costs: whether two objects share
// one hidden class (an object that has a class of its own also carries its own descriptors).
import v8 from 'node:v8';

v8.setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** True when V8 gives `a` and `b` one hidden class. */
export function sameHiddenClass(a: object, b: object): boolean {
  return haveSameMap(a, b);
}
