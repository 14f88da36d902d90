/** `resource.Quantity` parsing shared by the scheduler (NodeResourcesFit) and the kubelet (admission). */
import test from 'ava';
import { parseQuantity, quantityMilliValue, quantityValue } from '../src/index.js';

test('quantityMilliValue / quantityValue: cpu millicores and memory bytes, rounded up', (t) => {
  t.is(quantityMilliValue('500m'), 500);
  t.is(quantityMilliValue('2'), 2000);
  t.is(quantityMilliValue('0.1'), 100);
  t.is(quantityMilliValue('1.5'), 1500);
  t.is(quantityValue('1Gi'), 1024 ** 3);
  t.is(quantityValue('128Mi'), 128 * 1024 ** 2);
  t.is(quantityValue('1G'), 1e9);
  t.is(quantityValue('1e3'), 1000);
  t.is(quantityValue('110'), 110);
  t.is(quantityValue('12x'), undefined);
});

test('parseQuantity: base units as a float; unset and malformed are undefined', (t) => {
  t.is(parseQuantity('100m'), 0.1);
  t.is(parseQuantity('1.5'), 1.5);
  t.is(parseQuantity('128Mi'), 128 * 1024 ** 2);
  t.is(parseQuantity(' 4 '), 4);
  t.is(parseQuantity(3), 3);
  t.is(parseQuantity(undefined), undefined);
  t.is(parseQuantity('1.2.3'), undefined);
  t.is(parseQuantity('lots'), undefined);
});
