console.log('app generation 1');
